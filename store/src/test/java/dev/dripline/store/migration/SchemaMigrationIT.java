package dev.dripline.store.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.micronaut.context.ApplicationContext;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Dripline's start-up migration against the engine's traffic of the release before it, on a
 * database of its own ({@code <test database>_migration}, dropped and created per test) migrated to
 * V12, the last version that release knows. The engine locks a run's row first and then reads and
 * writes the run's batches, in one transaction; V13 alters both tables.
 */
class SchemaMigrationIT {
  private static final String TEST_DB_URL =
      System.getenv()
          .getOrDefault(
              "DRIPLINE_TEST_DB_URL",
              "jdbc:postgresql://127.0.0.1:5432/dripline_test?sslmode=disable");
  private static final String USER =
      System.getenv().getOrDefault("DRIPLINE_TEST_DB_USER", "dripline");
  private static final String PASSWORD =
      System.getenv().getOrDefault("DRIPLINE_TEST_DB_PASSWORD", "dripline");
  private static final Duration BOUND = Duration.ofSeconds(60);
  static final String LATEST_VERSION = "44";

  private final ExecutorService startUps = Executors.newSingleThreadExecutor();
  private final RecordedLog migrationLog = new RecordedLog(SchemaMigration.class, Level.WARN);
  private CompletableFuture<ApplicationContext> startUp;
  private String url;

  @BeforeEach
  void freshDatabaseAtTheReleaseBefore() throws SQLException {
    url = freshDatabase();
    Flyway.configure()
        .dataSource(url, USER, PASSWORD)
        .locations("classpath:db/migration")
        .target("12")
        .load()
        .migrate();
    migrationLog.attach();
  }

  @AfterEach
  void stopDripline() throws Exception {
    migrationLog.detach();
    if (startUp != null) {
      var unused = startUp.thenAccept(ApplicationContext::close);
    }
    startUps.shutdown();
    assertThat(startUps.awaitTermination(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void migrationWaitsForTheEnginesRunLockInsteadOfDeadlockingWithIt() throws Exception {
    try (Connection engine = connect()) {
      long run = insertRunWithBatch(engine);
      engine.setAutoCommit(false);
      lockRunRow(engine, run);

      startUp = startDripline(Map.of());
      awaitMigrationWaitingToLock("runs");
      // The engine's transaction goes on with the run's batches, as a claim or completion does.
      try (PreparedStatement s =
          engine.prepareStatement("update batches set attempts = attempts + 1 where run_id = ?")) {
        s.setLong(1, run);
        assertThat(s.executeUpdate()).isEqualTo(1);
      }
      engine.commit();

      assertThat(startUp.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isNotNull();
      assertThat(schemaVersion()).isEqualTo(LATEST_VERSION);
    }
  }

  @Test
  void migrationThatTimesOutOnALockIsRetriedAndLetsTheEngineThroughMeanwhile() throws Exception {
    try (Connection engine = connect();
        Connection reader = connect()) {
      long run = insertRunWithBatch(engine);
      engine.setAutoCommit(false);
      lockRunRow(engine, run);

      startUp =
          startDripline(
              Map.of(
                  "dripline.migration.lock-timeout", "200ms",
                  "dripline.migration.retry-initial-interval", "50ms",
                  "dripline.migration.retry-max-interval", "200ms"));
      await("the migration retried after lock timeouts")
          .atMost(BOUND)
          .until(() -> migrationLog.lines().size() >= 2);
      // Traffic that arrives while the migration waits for its lock queues behind it for at most
      // the lock timeout, then goes on.
      CompletableFuture<Long> read =
          CompletableFuture.supplyAsync(() -> count(reader, "select count(*) from runs"));
      assertThat(read.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(startUp).isNotDone();

      engine.commit();

      assertThat(startUp.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isNotNull();
      assertThat(schemaVersion()).isEqualTo(LATEST_VERSION);
      assertThat(migrationLog.lines()).allMatch(line -> line.contains("55P03"));
    }
  }

  @Test
  void migrationThatFailsForAnotherReasonFailsStartUpAtOnce() {
    startUp =
        startDripline(
            Map.of(
                "flyway.datasources.default.locations",
                "classpath:db/migration,classpath:db/failing-migration"));

    Throwable failure = catchThrowable(() -> startUp.get(BOUND.toSeconds(), TimeUnit.SECONDS));

    assertThat(failure).hasRootCauseInstanceOf(SQLException.class);
    assertThat(causes(failure)).anyMatch(cause -> cause instanceof FlywayException);
    assertThat(failure).hasStackTraceContaining("V999__fails.sql");
    assertThat(migrationLog.lines()).isEmpty();
    assertThat(schemaVersion()).isEqualTo(LATEST_VERSION);
  }

  @Test
  void processThatDoesNotMigrateWaitsForTheMigrateStepAndThenStarts() throws Exception {
    startUp =
        startDripline(
            Map.of(
                "dripline.migration.on-start", "false",
                "dripline.migration.schema-wait", "2m",
                "dripline.migration.retry-initial-interval", "50ms",
                "dripline.migration.retry-max-interval", "200ms"));
    await("the process waiting for its schema")
        .atMost(BOUND)
        .until(() -> migrationLog.lines().size() >= 2);
    assertThat(startUp).isNotDone();
    assertThat(schemaVersion()).isEqualTo("12");
    assertThat(migrationLog.lines())
        .allMatch(line -> line.contains("at version 12, this release needs " + LATEST_VERSION));

    assertThat(
            Migrate.run(
                Map.of(
                    "datasources.default.url", url,
                    "datasources.default.username", USER,
                    "datasources.default.password", PASSWORD)))
        .isEqualTo(Migrate.MIGRATED);

    assertThat(startUp.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isNotNull();
    assertThat(schemaVersion()).isEqualTo(LATEST_VERSION);
  }

  @Test
  void processThatDoesNotMigrateFailsToStartOnceItHasWaitedLongEnough() {
    startUp =
        startDripline(
            Map.of(
                "dripline.migration.on-start", "false",
                "dripline.migration.schema-wait", "300ms",
                "dripline.migration.retry-initial-interval", "50ms",
                "dripline.migration.retry-max-interval", "100ms"));

    Throwable failure = catchThrowable(() -> startUp.get(BOUND.toSeconds(), TimeUnit.SECONDS));

    assertThat(failure)
        .hasRootCauseInstanceOf(IllegalStateException.class)
        .hasStackTraceContaining("at version 12, this release needs " + LATEST_VERSION)
        .hasStackTraceContaining("DRIPLINE_MIGRATE_ON_START");
    assertThat(schemaVersion()).isEqualTo("12");
  }

  // --- Dripline and the engine's traffic --------------------------------------------------------

  private CompletableFuture<ApplicationContext> startDripline(Map<String, Object> settings) {
    Map<String, Object> properties = new HashMap<>();
    properties.put("datasources.default.url", url);
    properties.put("datasources.default.username", USER);
    properties.put("datasources.default.password", PASSWORD);
    properties.put("datasources.default.maximum-pool-size", 4);
    properties.put("datasources.default.minimum-idle", 1);
    properties.put("dripline.migration.retry-initial-interval", "100ms");
    properties.put("dripline.migration.retry-max-interval", "1s");
    properties.putAll(settings);
    return CompletableFuture.supplyAsync(
        () -> ApplicationContext.builder().properties(properties).start(), startUps);
  }

  private static long insertRunWithBatch(Connection c) throws SQLException {
    long run;
    try (PreparedStatement s =
        c.prepareStatement(
            "insert into runs (backfill, options, options_key, batch_size, max_parallel_batches,"
                + " status) values ('example.sleep', '{}', '{}', 10, 1, 'running') returning id")) {
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        run = rs.getLong(1);
      }
    }
    try (PreparedStatement s =
        c.prepareStatement(
            "insert into batches (run_id, number, start_key, end_key, size, status)"
                + " values (?, 1, 1, 10, 10, 'running')")) {
      s.setLong(1, run);
      s.executeUpdate();
    }
    return run;
  }

  /** As {@code RunRepository.lockRow}: the run's row, locked until the transaction ends. */
  private static void lockRunRow(Connection c, long run) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("select id from runs where id = ? for update")) {
      s.setLong(1, run);
      try (ResultSet rs = s.executeQuery()) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  private void awaitMigrationWaitingToLock(String table) {
    await("the migration waiting to lock " + table)
        .atMost(BOUND)
        .until(
            () -> {
              try (Connection c = connect()) {
                return count(
                        c,
                        "select count(*) from pg_locks where not granted and relation = to_regclass('"
                            + table
                            + "')")
                    > 0;
              }
            });
  }

  // --- the database ----------------------------------------------------------------------------

  private static String freshDatabase() throws SQLException {
    URI test = URI.create(TEST_DB_URL.substring("jdbc:".length()));
    String name = test.getPath().substring(1) + "_migration";
    assertThat(name).matches("[a-z_][a-z0-9_]{0,62}");
    try (Connection c = DriverManager.getConnection(TEST_DB_URL, USER, PASSWORD);
        Statement s = c.createStatement()) {
      dropDatabase(c, name);
      s.execute("create database " + name);
    }
    return "jdbc:"
        + test.getScheme()
        + "://"
        + test.getAuthority()
        + "/"
        + name
        + (test.getQuery() == null ? "" : "?" + test.getQuery());
  }

  /**
   * Drops database {@code name} if it exists. Not {@code WITH (FORCE)}: that refuses a role without
   * {@code pg_signal_backend} as soon as an autovacuum worker is connected (a process of no role; a
   * new database's first analyze often is), while a plain {@code DROP DATABASE} stops autovacuum
   * workers itself. Sessions of this role left on it (a Dripline still closing) are terminated
   * first; a drop that still finds one ending is tried again.
   */
  private static void dropDatabase(Connection c, String name) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (PreparedStatement terminate =
          c.prepareStatement(
              "select pg_terminate_backend(pid) from pg_stat_activity"
                  + " where datname = ? and usename = current_user and pid <> pg_backend_pid()")) {
        terminate.setString(1, name);
        terminate.executeQuery().close();
      }
      try (Statement s = c.createStatement()) {
        s.execute("drop database if exists " + name);
        return;
      } catch (SQLException e) {
        // 55006: still accessed by other users (PostgreSQL waited 5 s for them to end).
        if (!"55006".equals(e.getSQLState()) || System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(url, USER, PASSWORD);
  }

  private String schemaVersion() {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select version from flyway_schema_history where success"
                    + " order by installed_rank desc limit 1")) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static long count(Connection c, String sql) {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<Throwable> causes(Throwable failure) {
    List<Throwable> causes = new ArrayList<>();
    for (Throwable t = failure; t != null && causes.size() < 32; t = t.getCause()) {
      causes.add(t);
    }
    return causes;
  }
}
