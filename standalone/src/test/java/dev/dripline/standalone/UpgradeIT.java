package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.SetWorkerDeploymentCurrentVersionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * K2 — a rolling upgrade from the previous release (spec §9 K2). The previous release's standalone
 * JVM (app and worker; built from git history by {@code bin/dripline-test}, env {@code
 * DRIPLINE_UPGRADE_FROM_JAR}) migrates a fresh database of its own to its latest version and starts
 * two runs of {@code long}-keyed examples at cap 3 through its API: {@code example.sleep} (the
 * concurrency witness) and {@code example.normalize-emails} (real rows). Once both have completed
 * batches, the database gets rows as the release before typed keys left them, bigint keys only: the
 * live runs' batches and cursors lose their bytes, and a completed run of {@link #SEEDED_BATCHES}
 * batches is inserted. Then this tree's standalone JVM starts beside the old one: it migrates under
 * the old code and fills the missing bytes in chunks before the contract's migrations, and both
 * serve one task queue: each plans and runs batches of both runs, including batches the other
 * planned. Then the old JVM is killed (SIGKILL) and the new one finishes the runs, replaying the
 * histories the old one wrote.
 *
 * <p>Chains are off and pages are 8 batches, so planning is called often and the two releases take
 * turns at it. A plan fault ({@code example_faults}, phase {@code plan}) holds each run's planning
 * while the new JVM starts and at the kill, so neither run can finish before the upgrade, however
 * fast or slow the machine: a run completes only once planning has found its last key.
 *
 * <p>Asserts: the fill gave every row without bytes its bytes, the constraint that requires them is
 * validated and the index on them valid; both runs completed exactly ({@link FaultRun#assertExact}:
 * counts, batch rows, counters; every seeded row normalised; the witness {@code max_seen} ≤ 3);
 * batches in ascending, non-overlapping key order; batches either release planned, and the seeded
 * run's, read back through the new API with their keys as JSON numbers; no workflow task failed in
 * any execution of either run (a payload the new code could not read, or a non-deterministic
 * replay, fails a workflow task).
 */
class UpgradeIT {
  private static final int CAP = 3;
  private static final int SLEEP_BATCHES = 300;
  private static final int SLEEP_MS = 100;
  private static final int NORMALIZE_BATCHES = 400;
  private static final int SEEDED_BATCHES = 3000;
  private static final int FILL_CHUNK_ROWS = 500;
  private static final long SEEDED_FIRST_KEY = 5_000_000_000L;
  private static final Pattern FILLED =
      Pattern.compile(
          "Typed keys: filled the key bytes of (\\d+) batches and (\\d+) run cursors in (\\d+)"
              + " chunks, (\\d+) ms");
  private static final Duration BOUND = Duration.ofMinutes(5);
  private static final String TEMPORAL_ADDRESS =
      System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243");

  private final String tag = "k2up-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<DriplineProcess> processes = new ArrayList<>();
  private WorkflowServiceStubs stubs;

  /** The API of the release serving now; the database both releases share. */
  private static final class Host implements RunHost {
    private final Sql sql;
    private volatile Api api;

    Host(Sql sql) {
      this.sql = sql;
    }

    @Override
    public Api api() {
      return api;
    }

    @Override
    public Sql sql() {
      return sql;
    }
  }

  @AfterEach
  void stopProcesses() {
    processes.forEach(DriplineProcess::kill);
    if (stubs != null) {
      stubs.shutdownNow();
    }
  }

  @Test
  void runsStartedOnThePreviousReleaseCompleteExactlyOnThisOne() throws Exception {
    String oldClasspath = previousReleaseClasspath();
    String dbUrl = freshDatabase();
    WorkflowClient temporal = connect();
    Sql sql = new Sql(dbUrl);
    Host host = new Host(sql);
    Map<String, String> env = environment(dbUrl);

    int oldPort = LocalPorts.free();
    DriplineProcess old =
        start(DriplineProcess.standalone(tag + "-old", oldClasspath, oldPort, env));
    Api oldApi = new Api(DriplineProcess.local(oldPort));
    awaitServing(old, oldApi, sql, false);
    assertThat(schemaVersion(sql)).as("the previous release's schema").isEqualTo("41");
    // A run's workflow id is dripline-run-<id>, and a new run's start ends an open execution under
    // its id: ids far from those of the other databases' runs on the shared dev server.
    sql.queryLong(
        "select setval('runs_id_seq', ?)",
        ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50));
    host.api = oldApi;

    try (FaultRun sleep = FaultRun.sleep(host, tag + "-s", SLEEP_BATCHES, SLEEP_MS, CAP);
        FaultRun normalize = FaultRun.normalizeEmails(host, tag + "-n", NORMALIZE_BATCHES, CAP)) {
      List<FaultRun> runs = List.of(sleep, normalize);
      List<String> tags = List.of(tag + "-s", tag + "-n");
      awaitUntil(
          "each run completed " + 2 * CAP + " batches on the previous release",
          () -> runs.stream().allMatch(run -> run.completed() >= 2 * CAP),
          old);
      holdPlanning(sql, tags, runs);
      String beforeUpgrade = completed(runs);
      long seeded = seedRowsWithoutBytes(sql, runs);
      long withoutBytes = withoutBytes(sql);

      // The upgrade: this release starts beside the old one, fills and migrates under it.
      int newPort = LocalPorts.free();
      DriplineProcess fresh =
          start(
              DriplineProcess.standalone(
                  tag + "-new", System.getProperty("java.class.path"), newPort, env));
      awaitServing(fresh, new Api(DriplineProcess.local(newPort)), sql, true);
      assertThat(schemaVersion(sql)).as("this release's schema").isEqualTo("44");
      String fill = assertFilled(sql, fresh, withoutBytes);
      assertThat(old.alive())
          .as("old release alive after the migration:\n%s", old.tail(40))
          .isTrue();
      host.api = new Api(DriplineProcess.local(newPort));
      String atMigration = completed(runs);
      Instant overlapStart = Instant.now();
      Workers workers = new Workers(old.pid(), fresh.pid());
      releasePlanning(sql, tags);

      // Both serve until each has run batches of both runs since the migration and the old one
      // planned a page after the new one did (the cursor both write), or a run's plan is 70 % done.
      awaitUntil(
          "both releases serve both runs",
          () -> {
            boolean shared = true;
            for (FaultRun run : runs) {
              if (plannedBatches(sql, run) >= 0.7 * run.batches()) {
                return true;
              }
              Shares shares = shares(temporal, run, workers, overlapStart);
              shared &= shares.oldPlannedAfterNew && shares.oldBatches > 0 && shares.newBatches > 0;
            }
            return shared;
          },
          old,
          fresh);
      holdPlanning(sql, tags, runs);
      String atKill = completed(runs);
      old.kill();
      releasePlanning(sql, tags);

      sleep.awaitCompleted(Duration.ofMinutes(10));
      normalize.awaitCompleted(Duration.ofMinutes(10));
      assertThat(fresh.alive()).as("new release alive:\n%s", fresh.tail(40)).isTrue();
      List<String> figures = new ArrayList<>();
      for (FaultRun run : runs) {
        String exact = run.assertExact("K2", 1);
        int[] planned = assertKeysReadBack(host, run);
        awaitUntil(
            "run " + run.id() + "'s workflow completed",
            () -> shares(temporal, run, workers, overlapStart).completed,
            fresh);
        Shares shares = shares(temporal, run, workers, overlapStart);
        assertThat(shares.failedTasks).as("workflow tasks failed in run %d", run.id()).isEmpty();
        if (run == sleep) {
          assertThat(shares.carriedOn)
              .as("executions of run %d the new release carried on from the old", run.id())
              .isPositive();
        }
        figures.add(
            exact
                + "; "
                + shares.describe()
                + ", batches planned by the old release "
                + planned[0]
                + ", by the new one "
                + planned[1]);
      }
      assertSeededRunReadsBack(host, seeded);
      assertThat(withoutBytes(sql)).as("batches without bytes after the runs").isZero();
      FaultRun.record(
          "K2 upgrade from "
              + System.getenv("DRIPLINE_UPGRADE_FROM_JAR")
              + ": completed batches when the upgrade began "
              + beforeUpgrade
              + ", when this release served "
              + atMigration
              + ", at the kill "
              + atKill
              + " | "
              + fill
              + " | "
              + String.join(" | ", figures));
    }
  }

  /**
   * D3 — a deploy of a new Worker Deployment Version while a run is in flight. The previous release
   * runs as version {@code old} of a deployment, made current, and starts a run of {@code
   * example.sleep} at cap 3; once batches have completed and its planning is held, this tree starts
   * as version {@code new} of the same deployment (it migrates and fills under the old one), and
   * {@code new} is made current. The run's workflow, which auto-upgrades, moves to {@code new} at
   * its next task; then the old JVM is stopped as a deploy stops a pod (SIGTERM: it stops polling
   * and lets its in-flight batches finish) and the new one finishes the run.
   *
   * <p>Asserts: the run completed exactly with the witness within the cap ({@link
   * FaultRun#assertExact}); its workflow ended on version {@code new}, the new worker carried on an
   * execution the old one began and ran batches; the old JVM exited within its grace; no workflow
   * task failed.
   */
  @Test
  void aNewWorkerVersionTakesOverARunInFlightWhileTheOldDrains() throws Exception {
    String oldClasspath = previousReleaseClasspath();
    String dbUrl = freshDatabase();
    WorkflowClient temporal = connect();
    Sql sql = new Sql(dbUrl);
    Host host = new Host(sql);
    String deployment = "dripline-" + tag;

    int oldPort = LocalPorts.free();
    DriplineProcess old =
        start(
            DriplineProcess.standalone(
                tag + "-old", oldClasspath, oldPort, versioned(dbUrl, "old")));
    Api oldApi = new Api(DriplineProcess.local(oldPort));
    awaitServing(old, oldApi, sql, true);
    makeCurrent(deployment, "old");
    sql.queryLong(
        "select setval('runs_id_seq', ?)",
        ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50));
    host.api = oldApi;

    try (FaultRun sleep = FaultRun.sleep(host, tag + "-s", SLEEP_BATCHES, SLEEP_MS, CAP)) {
      List<FaultRun> runs = List.of(sleep);
      List<String> tags = List.of(tag + "-s");
      awaitUntil(
          "the run completed " + 2 * CAP + " batches on version old",
          () -> sleep.completed() >= 2 * CAP,
          old);
      holdPlanning(sql, tags, runs);

      int newPort = LocalPorts.free();
      DriplineProcess fresh =
          start(
              DriplineProcess.standalone(
                  tag + "-new",
                  System.getProperty("java.class.path"),
                  newPort,
                  versioned(dbUrl, "new")));
      awaitServing(fresh, new Api(DriplineProcess.local(newPort)), sql, true);
      host.api = new Api(DriplineProcess.local(newPort));
      String atSwitch = completed(runs);
      makeCurrent(deployment, "new");
      releasePlanning(sql, tags);
      awaitUntil(
          "run " + sleep.id() + "'s workflow runs on version new",
          () -> "new".equals(buildIdOf(sleep)),
          old,
          fresh);
      String atDrain = completed(runs);
      long drainStart = System.nanoTime();
      assertThat(old.stop(Duration.ofMinutes(3)))
          .as("the old release exits after its grace:\n%s", old.tail(40))
          .isTrue();
      long drainMillis = (System.nanoTime() - drainStart) / 1_000_000;

      sleep.awaitCompleted(Duration.ofMinutes(10));
      String exact = sleep.assertExact("D3", 1);
      Workers workers = new Workers(old.pid(), fresh.pid());
      awaitUntil(
          "run " + sleep.id() + "'s workflow completed",
          () -> shares(temporal, sleep, workers, Instant.EPOCH).completed,
          fresh);
      Shares shares = shares(temporal, sleep, workers, Instant.EPOCH);
      assertThat(shares.failedTasks).as("workflow tasks failed").isEmpty();
      assertThat(shares.carriedOn).as("executions the new version carried on").isPositive();
      assertThat(shares.newBatches).as("batches the new version ran").isPositive();
      assertThat(buildIdOf(sleep)).as("the version the run ended on").isEqualTo("new");
      FaultRun.record(
          "D3 deploy of a new worker version: completed batches at the switch "
              + atSwitch
              + ", when the run's workflow was on the new version "
              + atDrain
              + "; the old release drained in "
              + drainMillis
              + " ms | "
              + exact
              + "; "
              + shares.describe());
    }
  }

  /** A client of the test Temporal server; its stubs are shut down after the test. */
  private WorkflowClient connect() {
    stubs =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget(TEMPORAL_ADDRESS).build());
    return WorkflowClient.newInstance(
        stubs, WorkflowClientOptions.newBuilder().setNamespace("default").build());
  }

  /** The environment of a versioned worker of build {@code buildId} of this test's deployment. */
  private Map<String, String> versioned(String dbUrl, String buildId) {
    Map<String, String> env = environment(dbUrl);
    env.put("DRIPLINE_DEPLOYMENT_NAME", "dripline-" + tag);
    env.put("DRIPLINE_BUILD_ID", buildId);
    return env;
  }

  /** Makes {@code buildId} current, once its workers' polls have made it known to the server. */
  private void makeCurrent(String deployment, String buildId) {
    await("version " + buildId + " made current")
        .atMost(BOUND)
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptionsInstanceOf(StatusRuntimeException.class)
        .until(
            () -> {
              stubs
                  .blockingStub()
                  .setWorkerDeploymentCurrentVersion(
                      SetWorkerDeploymentCurrentVersionRequest.newBuilder()
                          .setNamespace("default")
                          .setDeploymentName(deployment)
                          .setBuildId(buildId)
                          .setIdentity(tag)
                          .build());
              return true;
            });
  }

  /** The build id of the Worker Deployment Version run {@code run}'s workflow is on. */
  private String buildIdOf(FaultRun run) {
    return stubs
        .blockingStub()
        .describeWorkflowExecution(
            DescribeWorkflowExecutionRequest.newBuilder()
                .setNamespace("default")
                .setExecution(
                    WorkflowExecution.newBuilder().setWorkflowId("dripline-run-" + run.id()))
                .build())
        .getWorkflowExecutionInfo()
        .getVersioningInfo()
        .getDeploymentVersion()
        .getBuildId();
  }

  // --- the releases --------------------------------------------------------------------------

  /**
   * The previous release's runtime classpath: its classpath.txt, its standalone jar, and the jar of
   * its examples, which a release keeps out of its runtime classpath (a deployer adds their own
   * definitions' jar): {@code examples/target/} of the tree the standalone jar was built in.
   */
  private static String previousReleaseClasspath() throws IOException {
    String jar = System.getenv("DRIPLINE_UPGRADE_FROM_JAR");
    assertThat(jar)
        .as(
            "env DRIPLINE_UPGRADE_FROM_JAR is not set: run the tests with bin/dripline-test, which"
                + " builds the previous release from git history")
        .isNotBlank();
    Path classpath = Path.of(jar).resolveSibling("classpath.txt");
    assertThat(classpath).as("classpath.txt beside %s", jar).exists();
    Path examples = Path.of(jar).toAbsolutePath().getParent().resolveSibling("../examples/target");
    List<Path> examplesJars;
    try (var files = Files.list(examples.normalize())) {
      examplesJars =
          files
              .filter(f -> f.getFileName().toString().matches("dripline-examples-.*\\.jar"))
              .toList();
    }
    assertThat(examplesJars).as("the examples' jar in %s", examples.normalize()).hasSize(1);
    return Files.readString(classpath).trim() + ":" + jar + ":" + examplesJars.get(0);
  }

  /**
   * The environment of both releases: one database, Temporal server and task queue; a killed
   * worker's attempts retried within seconds; no chains and pages of 8 batches, so planning is
   * called every few batches; enough attempts for a planning call to wait out a hold; a new
   * execution every 250 batches: the sleep run's first execution, which only the old release can
   * have begun, is still open at the kill (under 70 % of its 300 batches are planned then), so the
   * new release must carry on a history the old one wrote; the normalize run's may continue as new
   * on either.
   */
  private Map<String, String> environment(String dbUrl) {
    Map<String, String> env = new HashMap<>();
    env.put("DRIPLINE_DB_URL", dbUrl);
    env.put("DRIPLINE_DB_USER", "dripline");
    env.put("DRIPLINE_DB_PASSWORD", "dripline");
    env.put("DRIPLINE_DB_POOL_SIZE", "20");
    env.put("TEMPORAL_ADDRESS", TEMPORAL_ADDRESS);
    env.put("DRIPLINE_TASK_QUEUE", "dripline-" + tag);
    env.put("DRIPLINE_BATCH_HEARTBEAT_TIMEOUT", "3s");
    env.put("DRIPLINE_BATCH_RETRY_INITIAL_INTERVAL", "200ms");
    env.put("DRIPLINE_BATCH_RETRY_MAX_INTERVAL", "2s");
    env.put("DRIPLINE_BATCH_MAX_ATTEMPTS", "300");
    env.put("DRIPLINE_BATCH_CHAIN_TIME", "0s");
    env.put("DRIPLINE_PLAN_PAGE_BATCHES", "8");
    env.put("DRIPLINE_MAX_BATCHES_PER_EXECUTION", "250");
    env.put("DRIPLINE_METRICS_INTERVAL", "2s");
    env.put("DRIPLINE_MIGRATION_FILL_CHUNK_ROWS", Integer.toString(FILL_CHUNK_ROWS));
    return env;
  }

  private DriplineProcess start(DriplineProcess process) {
    processes.add(process);
    return process.start();
  }

  /**
   * Waits until {@code process} answers on its API and its worker published the catalogue (with
   * keys, from this release: {@code withKeys}).
   */
  private static void awaitServing(DriplineProcess process, Api api, Sql sql, boolean withKeys) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .failFast(process.name() + " died:\n" + process.tail(60), () -> !process.alive())
        .until(
            () ->
                api.get("/api/backfills").status() == 200
                    && sql.queryLong(
                            "select count(*) from backfill_definitions where name in"
                                + " ('example.sleep', 'example.normalize-emails')"
                                + (withKeys ? " and key is not null" : ""))
                        == 2);
  }

  private static void awaitUntil(String what, BooleanSupplier condition, DriplineProcess... alive) {
    await(what)
        .atMost(BOUND)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              for (DriplineProcess process : alive) {
                assertThat(process.alive())
                    .as(
                        "%s alive while waiting until %s:\n%s",
                        process.name(), what, process.tail(40))
                    .isTrue();
              }
              return condition.getAsBoolean();
            });
  }

  // --- the database ----------------------------------------------------------------------------

  /**
   * Drops and creates {@code <test database>_upgrade}, so the previous release's Flyway migrates an
   * empty schema (the test database is at this release's version already).
   */
  private static String freshDatabase() throws SQLException {
    URI url = URI.create(TestDb.URL.substring("jdbc:".length()));
    String name = url.getPath().substring(1) + "_upgrade";
    assertThat(name).matches("[a-z_][a-z0-9_]{0,62}");
    try (Connection c = DriverManager.getConnection(TestDb.URL, "dripline", "dripline");
        Statement s = c.createStatement()) {
      dropDatabase(c, name);
      s.execute("create database " + name);
    }
    return "jdbc:"
        + url.getScheme()
        + "://"
        + url.getAuthority()
        + "/"
        + name
        + (url.getQuery() == null ? "" : "?" + url.getQuery());
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

  private static String schemaVersion(Sql sql) throws SQLException {
    try (Connection c = sql.connect();
        PreparedStatement s =
            c.prepareStatement(
                "select version from flyway_schema_history where success"
                    + " order by installed_rank desc limit 1");
        ResultSet rs = s.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /**
   * Holds the runs' planning (a plan fault): a planning call fails and is retried until released,
   * so a run cannot complete. Holds only while planning is not done.
   */
  private static void holdPlanning(Sql sql, List<String> tags, List<FaultRun> runs) {
    for (String runTag : tags) {
      sql.execute("insert into example_faults (tag, phase) values (?, 'plan')", runTag);
    }
    for (FaultRun run : runs) {
      assertThat(
              sql.queryLong("select count(*) from runs where id = ? and not plan_done", run.id()))
          .as("run %d still planning when held", run.id())
          .isEqualTo(1);
    }
  }

  private static void releasePlanning(Sql sql, List<String> tags) {
    for (String runTag : tags) {
      sql.execute("delete from example_faults where tag = ? and phase = 'plan'", runTag);
    }
  }

  private static int plannedBatches(Sql sql, FaultRun run) {
    return (int) sql.queryLong("select next_batch_number - 1 from runs where id = ?", run.id());
  }

  private static String completed(List<FaultRun> runs) {
    List<String> each = new ArrayList<>();
    for (FaultRun run : runs) {
      each.add(run.completed() + "/" + run.batches());
    }
    return String.join(", ", each);
  }

  /**
   * Rows as the release before typed keys left them, keys as bigints only: the bytes of the runs'
   * batches and cursors are cleared (the previous release reads the bigint where the bytes are
   * missing), and a completed run of {@link #SEEDED_BATCHES} batches is inserted. Returns the
   * seeded run's id.
   */
  private static long seedRowsWithoutBytes(Sql sql, List<FaultRun> runs) {
    for (FaultRun run : runs) {
      sql.execute(
          "update batches set start_key_bytes = null, end_key_bytes = null where run_id = ?",
          run.id());
      sql.execute("update runs set plan_cursor_key = null where id = ?", run.id());
    }
    long id =
        sql.queryLong(
            "insert into runs (backfill, options, options_key, batch_size, max_parallel_batches,"
                + " status, plan_done, next_batch_number, planned_keys, total_keys, plan_cursor,"
                + " started_at, finished_at) values ('example.sleep', '{}', ?, 10, 1, 'completed',"
                + " true, ?, ?, ?, ?, now(), now()) returning id",
            UUID.randomUUID().toString(),
            SEEDED_BATCHES + 1,
            10L * SEEDED_BATCHES,
            10L * SEEDED_BATCHES,
            SEEDED_FIRST_KEY + 10L * SEEDED_BATCHES - 1);
    sql.execute(
        "insert into batches (run_id, number, start_key, end_key, size, status, attempts)"
            + " select ?, n, ?::bigint + (n - 1) * 10, ?::bigint + n * 10 - 1, 10, 'completed', 1"
            + " from generate_series(1, ?) n",
        id,
        SEEDED_FIRST_KEY,
        SEEDED_FIRST_KEY,
        SEEDED_BATCHES);
    return id;
  }

  private static long withoutBytes(Sql sql) {
    return sql.queryLong(
        "select count(*) from batches where start_key_bytes is null or end_key_bytes is null");
  }

  /**
   * The new release filled the bytes of the {@code withoutBytes} batches and of three run cursors
   * in chunks, before the constraint that requires them, which is validated, and the index on them
   * is valid. Returns the fill's figures.
   */
  private static String assertFilled(Sql sql, DriplineProcess fresh, long withoutBytes)
      throws IOException {
    Matcher filled = FILLED.matcher(Files.readString(fresh.log()));
    assertThat(filled.find()).as("the fill's line in the log:\n%s", fresh.tail(60)).isTrue();
    assertThat(Long.parseLong(filled.group(1))).as("batches filled").isEqualTo(withoutBytes);
    assertThat(Long.parseLong(filled.group(2))).as("run cursors filled").isEqualTo(3);
    assertThat(Long.parseLong(filled.group(3)))
        .as("chunks")
        .isGreaterThan(withoutBytes / FILL_CHUNK_ROWS);
    assertThat(withoutBytes(sql)).as("batches without bytes after the fill").isZero();
    assertThat(
            sql.queryLong(
                "select count(*) from runs where plan_cursor is not null and plan_cursor_key is"
                    + " distinct from dripline_bigint_key(plan_cursor)"))
        .as("run cursors without their bytes")
        .isZero();
    assertThat(
            sql.queryLong(
                "select count(*) from pg_constraint where conname = 'batches_key_bytes_present'"
                    + " and convalidated"))
        .as("the constraint requiring the bytes, validated")
        .isEqualTo(1);
    assertThat(
            sql.queryLong(
                "select count(*) from pg_index where indisvalid"
                    + " and indexrelid = to_regclass('batches_run_key_bytes_idx')"))
        .as("the index on the bytes, valid")
        .isEqualTo(1);
    return "fill: "
        + filled.group(1)
        + " batches and "
        + filled.group(2)
        + " run cursors in "
        + filled.group(3)
        + " chunks of "
        + FILL_CHUNK_ROWS
        + " rows, "
        + filled.group(4)
        + " ms";
  }

  /**
   * Every batch read through the new API: keys are JSON numbers, equal to the bigint columns where
   * the old release wrote them, batches in ascending key order and not overlapping. Returns how
   * many the old release planned (rows with bigint keys, which the new one does not write) and how
   * many the new one did; each planned some.
   */
  private static int[] assertKeysReadBack(Host host, FaultRun run) throws SQLException {
    Map<Integer, long[]> oldPlanned = new HashMap<>();
    try (Connection c = host.sql().connect();
        PreparedStatement s =
            c.prepareStatement(
                "select number, start_key, end_key from batches"
                    + " where run_id = ? and start_key is not null")) {
      s.setLong(1, run.id());
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          oldPlanned.put(rs.getInt(1), new long[] {rs.getLong(2), rs.getLong(3)});
        }
      }
    }
    assertThat(oldPlanned).as("batches planned by the old release, run %d", run.id()).isNotEmpty();
    List<JsonNode> batches = readBatches(host, run.id(), run.batches());
    long previousEnd = Long.MIN_VALUE;
    int checked = 0;
    for (JsonNode batch : batches) {
      int number = batch.path("number").asInt();
      JsonNode start = batch.path("startKey");
      JsonNode end = batch.path("endKey");
      assertThat(start.isIntegralNumber() && end.isIntegralNumber())
          .as("run %d batch %d keys are numbers: %s", run.id(), number, batch)
          .isTrue();
      assertThat(start.asLong())
          .as("run %d batch %d starts after the batch before ends: %s", run.id(), number, batch)
          .isGreaterThan(previousEnd)
          .isLessThanOrEqualTo(end.asLong());
      previousEnd = end.asLong();
      long[] written = oldPlanned.get(number);
      if (written != null) {
        assertThat(new long[] {start.asLong(), end.asLong()})
            .as("run %d batch %d as the old release wrote it", run.id(), number)
            .containsExactly(written);
        checked++;
      }
    }
    assertThat(checked).isEqualTo(oldPlanned.size());
    int newPlanned = batches.size() - checked;
    assertThat(newPlanned).as("batches planned by the new release, run %d", run.id()).isPositive();
    return new int[] {checked, newPlanned};
  }

  /** The seeded run's batches read through the new API with the keys they were inserted with. */
  private static void assertSeededRunReadsBack(Host host, long id) {
    List<JsonNode> batches = readBatches(host, id, SEEDED_BATCHES);
    for (int i = 0; i < batches.size(); i++) {
      JsonNode batch = batches.get(i);
      assertThat(batch.path("number").asInt()).isEqualTo(i + 1);
      assertThat(new long[] {batch.path("startKey").asLong(), batch.path("endKey").asLong()})
          .as("seeded batch %s", batch)
          .containsExactly(SEEDED_FIRST_KEY + 10L * i, SEEDED_FIRST_KEY + 10L * i + 9);
      assertThat(batch.path("startKey").isIntegralNumber()).as("%s", batch).isTrue();
    }
  }

  private static List<JsonNode> readBatches(Host host, long runId, int count) {
    List<JsonNode> batches = new ArrayList<>();
    for (int page = 0; batches.size() < count; page++) {
      Api.Response response =
          host.api().get("/api/runs/" + runId + "/batches?size=200&page=" + page);
      assertThat(response.status()).as("%s", response.body()).isEqualTo(200);
      JsonNode items = response.body().path("items");
      assertThat(items.size()).as("batches page %d of run %d", page, runId).isPositive();
      items.forEach(batches::add);
    }
    assertThat(batches).hasSize(count);
    return batches;
  }

  // --- the workflow histories ------------------------------------------------------------------

  /** The two workers, told apart by the SDK's default identity, {@code <pid>@<host>}. */
  private record Workers(long oldPid, long newPid) {
    boolean old(String identity) {
      return identity.startsWith(oldPid + "@");
    }

    boolean fresh(String identity) {
      return identity.startsWith(newPid + "@");
    }
  }

  /**
   * Who did what in a run's workflow, over all its executions.
   *
   * @param oldBatches batch activities the old worker started since the migration
   * @param newBatches batch activities the new worker started
   * @param oldPlans planning calls the old worker ran
   * @param newPlans planning calls the new worker ran
   * @param oldPlannedAfterNew whether the old worker ran a planning call after the new one had
   * @param executions executions of the workflow
   * @param carriedOn executions whose workflow tasks the new worker took over from the old one
   *     (replaying what the old one wrote)
   * @param failedTasks the workflow tasks that failed: cause, failure and worker
   * @param completed whether the last execution completed
   */
  private record Shares(
      int oldBatches,
      int newBatches,
      int oldPlans,
      int newPlans,
      boolean oldPlannedAfterNew,
      int executions,
      int carriedOn,
      List<String> failedTasks,
      boolean completed) {
    String describe() {
      return String.format(
          "batch activities since the migration old %d / new %d, planning calls old %d / new %d"
              + " (old after new: %s), executions %d, of which the new worker carried on the"
              + " old one's %d",
          oldBatches, newBatches, oldPlans, newPlans, oldPlannedAfterNew, executions, carriedOn);
    }
  }

  private static Shares shares(
      WorkflowClient temporal, FaultRun run, Workers workers, Instant since) {
    int oldBatches = 0;
    int newBatches = 0;
    int oldPlans = 0;
    int newPlans = 0;
    boolean oldPlannedAfterNew = false;
    int carriedOn = 0;
    List<String> failedTasks = new ArrayList<>();
    List<WorkflowExecutionHistory> executions = RunExecutions.all(temporal, run.id());
    for (WorkflowExecutionHistory execution : executions) {
      Map<Long, String> activityTypes = new HashMap<>();
      boolean oldTask = false;
      boolean newTaskAfterOld = false;
      for (HistoryEvent event : execution.getEvents()) {
        EventType type = event.getEventType();
        if (type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
          activityTypes.put(
              event.getEventId(),
              event.getActivityTaskScheduledEventAttributes().getActivityType().getName());
        } else if (type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
          var started = event.getActivityTaskStartedEventAttributes();
          String activity = activityTypes.getOrDefault(started.getScheduledEventId(), "");
          String identity = started.getIdentity();
          if (activity.equals("PlanningPlanNextPage")) {
            if (workers.old(identity)) {
              oldPlans++;
              oldPlannedAfterNew |= newPlans > 0;
            } else if (workers.fresh(identity)) {
              newPlans++;
            }
          } else if (activity.equals("BatchProcessBatch")) {
            Instant at = Instant.ofEpochSecond(event.getEventTime().getSeconds());
            if (workers.old(identity) && !at.isBefore(since.minusSeconds(1))) {
              oldBatches++;
            } else if (workers.fresh(identity)) {
              newBatches++;
            }
          }
        } else if (type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
          String identity = event.getWorkflowTaskCompletedEventAttributes().getIdentity();
          oldTask |= workers.old(identity);
          newTaskAfterOld |= oldTask && workers.fresh(identity);
        } else if (type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
          var failed = event.getWorkflowTaskFailedEventAttributes();
          failedTasks.add(
              failed.getCause()
                  + ": "
                  + failed.getFailure().getMessage()
                  + " (worker "
                  + failed.getIdentity()
                  + ", event "
                  + event.getEventId()
                  + ")");
        }
      }
      if (newTaskAfterOld) {
        carriedOn++;
      }
    }
    boolean completed =
        executions.get(executions.size() - 1).getLastEvent().getEventType()
            == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED;
    return new Shares(
        oldBatches,
        newBatches,
        oldPlans,
        newPlans,
        oldPlannedAfterNew,
        executions.size(),
        carriedOn,
        failedTasks,
        completed);
  }
}
