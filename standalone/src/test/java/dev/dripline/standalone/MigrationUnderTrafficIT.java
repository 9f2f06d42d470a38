package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * D4 — the next release's migrations applied by the {@code migrate} step while runs go on. An app
 * and a worker JVM ({@link FaultStack}) on a database of their own ({@code <test
 * database>_live_migration}) run the three runs of {@link FaultScenario}; mid-run the step applies
 * a test-only migration set ({@code db/next-migration}: a column added to {@code batches} and to
 * {@code runs}, then an index built concurrently) with a lock timeout of {@link #LOCK_TIMEOUT}.
 * Meanwhile a long read of {@code runs} (a report, a dump) holds the lock the migration needs, so
 * the migration has to give way: it waits, times out, lets the engine's queued statements through,
 * and is tried again until the read ends.
 *
 * <p>Asserts: a sampler of {@code pg_stat_activity} never saw a statement of the engine wait for a
 * lock longer than the lock timeout plus {@link #MARGIN} (the migration's own catalogue change and
 * the sampling); the step retried after a lock timeout and exited 0; the schema has the columns and
 * a valid index; and the runs completed exactly, the cap held ({@link FaultRun#assertExact}).
 */
class MigrationUnderTrafficIT {
  private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration MARGIN = Duration.ofSeconds(2);
  private static final Duration BOUND = Duration.ofMinutes(5);
  private static final String MIGRATE_APPLICATION = "dripline-migrate";

  private final String tag = "d4-" + UUID.randomUUID().toString().substring(0, 8);
  private FaultStack stack;
  private DriplineProcess migrate;
  private LockWaitSampler sampler;

  @AfterEach
  void stopProcesses() throws Exception {
    try {
      if (sampler != null) {
        sampler.close();
      }
      if (migrate != null) {
        migrate.kill();
      }
    } finally {
      if (stack != null) {
        stack.close();
      }
    }
  }

  @Test
  void nextMigrationsApplyWhileRunsGoOnAndNoBatchWaitsBeyondTheLockTimeout() throws Exception {
    String dbUrl = freshDatabase();
    stack =
        new FaultStack(
                tag,
                dbUrl,
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                Map.of())
            .start();
    migrate =
        DriplineProcess.java(
            tag + "-migrate",
            "dev.dripline.store.migration.Migrate",
            Map.of(
                "DRIPLINE_DB_URL", dbUrl + "&ApplicationName=" + MIGRATE_APPLICATION,
                "DRIPLINE_DB_USER", "dripline",
                "DRIPLINE_DB_PASSWORD", "dripline",
                "DRIPLINE_MIGRATION_LOCK_TIMEOUT", LOCK_TIMEOUT.toMillis() + "ms",
                "DRIPLINE_MIGRATION_RETRY_INITIAL_INTERVAL", "200ms",
                "DRIPLINE_MIGRATION_RETRY_MAX_INTERVAL", "1s",
                "FLYWAY_DATASOURCES_DEFAULT_LOCATIONS",
                    "classpath:db/migration,classpath:db/next-migration"));
    sampler = new LockWaitSampler(dbUrl);

    FaultScenario.run(
        stack,
        "D4",
        tag,
        () -> {
          try (Connection report = DriverManager.getConnection(dbUrl, "dripline", "dripline")) {
            report.setAutoCommit(false);
            try (Statement s = report.createStatement();
                ResultSet rs = s.executeQuery("select count(*) from runs")) {
              rs.next();
            }
            migrate.start();
            await("the migration gave way to the engine twice")
                .atMost(BOUND)
                .failFast("the migrate step ended before giving way twice", () -> !migrate.alive())
                .until(() -> retries(migrate.log()) >= 2);
            report.commit();
          }
          await("the migrate step ended")
              .atMost(BOUND)
              .pollInterval(Duration.ofMillis(200))
              .until(() -> !migrate.alive());
        });
    sampler.close();

    assertThat(migrate.exitValue()).as("migrate:\n%s", migrate.tail(40)).isZero();
    assertThat(Files.readString(migrate.log())).contains("SQLState 55P03");
    assertThat(sampler.samples()).as("pg_stat_activity samples").isGreaterThan(10);
    assertThat(sampler.longestWait())
        .as(
            "longest lock wait of the engine's statements (%d samples saw one waiting)",
            sampler.waitingSamples())
        .isLessThanOrEqualTo(LOCK_TIMEOUT.plus(MARGIN));
    Sql sql = stack.sql();
    assertThat(
            sql.queryLong(
                "select count(*) from flyway_schema_history where success and version in"
                    + " ('900', '901')"))
        .isEqualTo(2);
    assertThat(sql.queryLong("select count(*) from flyway_schema_history where not success"))
        .isZero();
    assertThat(
            sql.queryLong(
                "select count(*) from information_schema.columns where (table_name, column_name)"
                    + " in (('batches', 'next_note'), ('runs', 'next_weight'))"))
        .isEqualTo(2);
    assertThat(
            sql.queryLong(
                "select count(*) from pg_index where indisvalid"
                    + " and indexrelid = to_regclass('batches_next_idx')"))
        .isEqualTo(1);
    FaultRun.record(
        String.format(
            "D4 migrate step retried %d times after lock timeouts; longest lock wait of the"
                + " engine's statements %d ms (lock timeout %d ms)",
            retries(migrate.log()), sampler.longestWait().toMillis(), LOCK_TIMEOUT.toMillis()));
  }

  /** How many times the step's log says a migration attempt failed and was tried again. */
  private static int retries(Path log) throws IOException {
    return (int)
        Files.readAllLines(log).stream().filter(line -> line.contains("Migration attempt")).count();
  }

  /**
   * Samples, every 20 ms, how long the statements of the engine (every session on the database but
   * the migration's and its own) have waited for a heavyweight lock: {@code now - query_start} of
   * an active statement whose wait event is a lock, an upper bound of its lock wait.
   */
  private static final class LockWaitSampler implements AutoCloseable {
    private static final String WAITS =
        "select coalesce(max(extract(epoch from clock_timestamp() - query_start) * 1000), -1)"
            + " from pg_stat_activity where datname = current_database()"
            + " and backend_type = 'client backend' and state = 'active'"
            + " and wait_event_type = 'Lock' and pid <> pg_backend_pid()"
            + " and application_name <> '"
            + MIGRATE_APPLICATION
            + "'";
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong longestMillis = new AtomicLong();
    private final AtomicLong samples = new AtomicLong();
    private final AtomicLong waiting = new AtomicLong();
    private final Thread thread;
    private volatile Exception failure;

    LockWaitSampler(String url) {
      thread =
          new Thread(
              () -> {
                try (Connection c = DriverManager.getConnection(url, "dripline", "dripline");
                    PreparedStatement s = c.prepareStatement(WAITS)) {
                  while (running.get()) {
                    try (ResultSet rs = s.executeQuery()) {
                      rs.next();
                      long millis = (long) rs.getDouble(1);
                      samples.incrementAndGet();
                      if (millis >= 0) {
                        waiting.incrementAndGet();
                        longestMillis.accumulateAndGet(millis, Math::max);
                      }
                    }
                    Thread.sleep(20);
                  }
                } catch (SQLException | InterruptedException e) {
                  failure = e;
                }
              },
              "lock-wait-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    Duration longestWait() {
      return Duration.ofMillis(longestMillis.get());
    }

    long samples() {
      return samples.get();
    }

    long waitingSamples() {
      return waiting.get();
    }

    @Override
    public void close() {
      running.set(false);
      try {
        thread.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      assertThat(failure).as("the sampler's failure").isNull();
    }
  }

  // --- the database ----------------------------------------------------------------------------

  /** Drops and creates {@code <test database>_live_migration}; the stack migrates it at start. */
  private static String freshDatabase() throws SQLException {
    URI url = URI.create(TestDb.URL.substring("jdbc:".length()));
    String name = url.getPath().substring(1) + "_live_migration";
    assertThat(name).matches("[a-z_][a-z0-9_]{0,62}");
    try (Connection c = DriverManager.getConnection(TestDb.URL, "dripline", "dripline");
        Statement s = c.createStatement()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (true) {
        try (PreparedStatement terminate =
            c.prepareStatement(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                    + " where datname = ? and usename = current_user and pid <> pg_backend_pid()")) {
          terminate.setString(1, name);
          terminate.executeQuery().close();
        }
        try {
          s.execute("drop database if exists " + name);
          break;
        } catch (SQLException e) {
          // 55006: still accessed by other users; see UpgradeIT.dropDatabase.
          if (!"55006".equals(e.getSQLState()) || System.nanoTime() > deadline) {
            throw e;
          }
        }
      }
      s.execute("create database " + name);
    }
    return "jdbc:"
        + url.getScheme()
        + "://"
        + url.getAuthority()
        + "/"
        + name
        + (url.getQuery() == null ? "?sslmode=disable" : "?" + url.getQuery());
  }
}
