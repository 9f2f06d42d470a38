package dev.dripline.bench;

import ch.qos.logback.classic.Level;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dripline.examples.NormalizeEmailsBackfill;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.LoggerFactory;
import org.springframework.batch.core.BatchStatus;
import org.springframework.batch.core.Job;
import org.springframework.batch.core.JobExecution;
import org.springframework.batch.core.JobParametersBuilder;
import org.springframework.batch.core.Step;
import org.springframework.batch.core.StepExecution;
import org.springframework.batch.core.job.builder.JobBuilder;
import org.springframework.batch.core.launch.support.TaskExecutorJobLauncher;
import org.springframework.batch.core.partition.support.Partitioner;
import org.springframework.batch.core.partition.support.TaskExecutorPartitionHandler;
import org.springframework.batch.core.repository.JobRepository;
import org.springframework.batch.core.repository.support.JobRepositoryFactoryBean;
import org.springframework.batch.core.step.builder.StepBuilder;
import org.springframework.batch.core.step.tasklet.Tasklet;
import org.springframework.batch.item.ExecutionContext;
import org.springframework.batch.repeat.RepeatStatus;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/**
 * W2's second baseline: a Spring Batch (5.2, on Spring Framework 6.2) partitioned step, inside the
 * bench JVM, built programmatically (no Spring Boot, no application context).
 *
 * <ul>
 *   <li>JobRepository: JDBC ({@link JobRepositoryFactoryBean}, defaults: serializable isolation for
 *       creating job executions, the default execution-context serializer) in the same PostgreSQL
 *       database, over a HikariCP pool of {@code threads + 2} connections (a worker's chunk
 *       transaction plus the manager's repository updates never wait for a connection); its schema
 *       comes from Spring Batch's own {@code schema-postgresql.sql} when {@code batch_job_instance}
 *       is missing. Its tables are emptied before each run (not timed), so every run starts from
 *       the same, empty repository.
 *   <li>Job {@code w2-normalize-emails}: one manager step whose {@link Partitioner} plans with
 *       {@link W2Ranges#planAll} (the example's scope query, the same pages) and makes one
 *       partition per batch range; a {@link TaskExecutorPartitionHandler} on a {@link
 *       ThreadPoolTaskExecutor} of {@code threads} threads runs the worker step for each partition,
 *       in key order.
 *   <li>Worker step: a tasklet step whose tasklet runs {@link NormalizeEmailsBackfill#BATCH_SQL}
 *       over its partition's range through a {@link JdbcTemplate}, inside the step's chunk
 *       transaction ({@link JdbcTransactionManager} over the pool), which also saves the step's
 *       execution and context: Spring Batch's usual bookkeeping.
 * </ul>
 *
 * Timed from {@code JobLauncher.run} (synchronous launcher) to its return; the job must end {@code
 * COMPLETED}.
 */
final class W2SpringBatch implements AutoCloseable {
  static final String JOB_NAME = "w2-normalize-emails";
  private static final String WORKER_STEP = "w2-worker";

  private final HikariDataSource dataSource;
  private final JdbcTransactionManager transactionManager;
  private final JobRepository jobRepository;
  private final TaskExecutorJobLauncher launcher;
  private final ThreadPoolTaskExecutor executor;
  private final int threads;

  /** What one run did. */
  record Result(
      double seconds,
      int batches,
      long rowsUpdated,
      W2Ranges.Fingerprint ranges,
      int threads,
      long stepExecutions) {}

  W2SpringBatch(String url, String user, String password, int threads) throws Exception {
    quietSpringLogs();
    this.threads = threads;
    HikariConfig hikari = new HikariConfig();
    hikari.setJdbcUrl(url);
    hikari.setUsername(user);
    hikari.setPassword(password);
    hikari.setMaximumPoolSize(threads + 2);
    hikari.setMinimumIdle(threads + 2);
    hikari.setPoolName("w2-spring");
    dataSource = new HikariDataSource(hikari);
    W2JdbcPool.warm(dataSource, threads + 2);
    createSchemaIfMissing();
    transactionManager = new JdbcTransactionManager(dataSource);
    JobRepositoryFactoryBean factory = new JobRepositoryFactoryBean();
    factory.setDataSource(dataSource);
    factory.setTransactionManager(transactionManager);
    factory.afterPropertiesSet();
    jobRepository = factory.getObject();
    launcher = new TaskExecutorJobLauncher();
    launcher.setJobRepository(jobRepository);
    launcher.afterPropertiesSet();
    executor = new ThreadPoolTaskExecutor();
    executor.setCorePoolSize(threads);
    executor.setMaxPoolSize(threads);
    executor.setThreadNamePrefix("w2-spring-");
    executor.setDaemon(true);
    executor.initialize();
  }

  /** Spring Batch logs every step execution at INFO; the bench's output is the table. */
  private static void quietSpringLogs() {
    if (LoggerFactory.getLogger("org.springframework")
        instanceof ch.qos.logback.classic.Logger logger) {
      logger.setLevel(Level.WARN);
    }
  }

  private void createSchemaIfMissing() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery("select to_regclass('batch_job_instance') is not null")) {
      rs.next();
      if (rs.getBoolean(1)) {
        return;
      }
    }
    System.out.println(
        "creating Spring Batch's JobRepository schema (org/springframework/batch/core/"
            + "schema-postgresql.sql)");
    new ResourceDatabasePopulator(
            new ClassPathResource("org/springframework/batch/core/schema-postgresql.sql"))
        .execute(dataSource);
  }

  /** Empties the JobRepository (not timed), so every run starts from the same state. */
  void clearRepository() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "truncate batch_step_execution_context, batch_step_execution,"
              + " batch_job_execution_context, batch_job_execution_params, batch_job_execution,"
              + " batch_job_instance");
    }
  }

  /** One run of the job over the current data. */
  Result run(int batchSize) throws Exception {
    JdbcTemplate jdbc = new JdbcTemplate(dataSource);
    Tasklet tasklet =
        (contribution, chunkContext) -> {
          ExecutionContext context =
              chunkContext.getStepContext().getStepExecution().getExecutionContext();
          int updated =
              jdbc.update(
                  NormalizeEmailsBackfill.BATCH_SQL,
                  context.getLong("startKey"),
                  context.getLong("endKey"));
          contribution.incrementWriteCount(updated);
          return RepeatStatus.FINISHED;
        };
    Step worker =
        new StepBuilder(WORKER_STEP, jobRepository).tasklet(tasklet, transactionManager).build();

    List<W2Ranges.Range> planned = new ArrayList<>();
    Partitioner partitioner =
        gridSize -> {
          try (Connection connection = dataSource.getConnection()) {
            Map<String, ExecutionContext> partitions = new LinkedHashMap<>();
            for (W2Ranges.Range range : W2Ranges.planAll(connection, W2Example.EMAILS, batchSize)) {
              planned.add(range);
              ExecutionContext context = new ExecutionContext();
              context.putLong("startKey", range.start().getLong(0));
              context.putLong("endKey", range.end().getLong(0));
              context.putInt("size", range.size());
              context.putInt("index", partitions.size());
              partitions.put("partition" + partitions.size(), context);
            }
            return partitions;
          } catch (SQLException e) {
            throw new IllegalStateException("planning the partitions failed", e);
          }
        };
    TaskExecutorPartitionHandler handler = new InKeyOrderPartitionHandler();
    handler.setTaskExecutor(executor);
    handler.setStep(worker);
    handler.setGridSize(threads);
    handler.afterPropertiesSet();
    Step manager =
        new StepBuilder("w2-manager", jobRepository)
            .partitioner(WORKER_STEP, partitioner)
            .partitionHandler(handler)
            .build();
    Job job = new JobBuilder(JOB_NAME, jobRepository).start(manager).build();

    long start = System.nanoTime();
    JobExecution execution =
        launcher.run(
            job,
            new JobParametersBuilder()
                .addString("run", UUID.randomUUID().toString())
                .toJobParameters());
    double seconds = (System.nanoTime() - start) / 1e9;

    if (execution.getStatus() != BatchStatus.COMPLETED) {
      throw new IllegalStateException(
          "Spring Batch job ended "
              + execution.getStatus()
              + ": "
              + execution.getAllFailureExceptions());
    }
    long written = 0;
    long workers = 0;
    for (StepExecution step : execution.getStepExecutions()) {
      if (step.getStepName().startsWith(WORKER_STEP + ":")) {
        workers++;
        written += step.getWriteCount();
      }
    }
    if (workers != planned.size()) {
      throw new IllegalStateException(
          "Spring Batch ran " + workers + " partitions of " + planned.size());
    }
    return new Result(
        seconds,
        planned.size(),
        written,
        W2Ranges.Fingerprint.of(planned),
        threads,
        execution.getStepExecutions().size());
  }

  /**
   * Runs the partitions in key order (as Dripline starts its lowest-numbered batches first); the
   * stock splitter hands them over as a hash set. Nothing else changes.
   */
  private static final class InKeyOrderPartitionHandler extends TaskExecutorPartitionHandler {
    @Override
    protected Set<StepExecution> doHandle(
        StepExecution managerStepExecution, Set<StepExecution> partitionStepExecutions)
        throws Exception {
      List<StepExecution> sorted = new ArrayList<>(partitionStepExecutions);
      sorted.sort(Comparator.comparingInt(s -> s.getExecutionContext().getInt("index")));
      return super.doHandle(managerStepExecution, new LinkedHashSet<>(sorted));
    }
  }

  @Override
  public void close() {
    executor.shutdown();
    dataSource.close();
  }
}
