package dev.dripline.worker.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.throttle.CheckEvaluator;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.runtime.throttle.ThrottleConfig;
import dev.dripline.store.throttle.CheckRow;
import dev.dripline.store.throttle.CheckRowRepository;
import io.micronaut.context.ApplicationContext;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The worker's schedule of health checks at start-up, against real PostgreSQL. */
class CheckScheduleIT {
  private static final String GONE = "schedule-it-gone";
  private static final String KEPT = "schedule-it-kept";
  private static final String BLOCKED = "schedule-it-blocked";

  /** The advisory lock the blocked check waits for while the test holds it. */
  private static final long LOCK = 730_001;

  private ApplicationContext context;
  private CheckRowRepository rows;
  private CheckSchedule schedule;

  @BeforeEach
  void setUp() {
    context =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.address",
                "127.0.0.1:1",
                "dripline.throttle.evaluate",
                "false",
                "dripline.throttle.checks." + KEPT + ".kind",
                "sql",
                "dripline.throttle.checks." + KEPT + ".query",
                "select 1",
                "dripline.throttle.checks." + KEPT + ".threshold",
                "10",
                "dripline.throttle.checks." + KEPT + ".interval",
                "200ms",
                "dripline.throttle.checks." + BLOCKED + ".kind",
                "sql",
                "dripline.throttle.checks." + BLOCKED + ".query",
                "select cast(pg_advisory_xact_lock(" + LOCK + ") is null as int)",
                "dripline.throttle.checks." + BLOCKED + ".threshold",
                "10",
                "dripline.throttle.checks." + BLOCKED + ".timeout",
                "120s"),
            "test");
    rows = context.getBean(CheckRowRepository.class);
  }

  @AfterEach
  void tearDown() {
    if (schedule != null) {
      schedule.close();
    }
    rows.deleteByName(GONE);
    rows.deleteByName(KEPT);
    rows.deleteByName(BLOCKED);
    context.close();
  }

  /**
   * A check taken out of the configuration must not keep holding runs through the row it left: the
   * evaluator never writes it again, so start-up forgets it.
   */
  @Test
  void startUpForgetsTheRowsOfChecksNoLongerConfigured() {
    Instant then = Instant.parse("2026-01-01T00:00:00Z");
    rows.record(GONE, "sql", 99.0, 1, 0.8, "over", true, then, then, null, new String[0]);
    rows.record(KEPT, "sql", 1.0, 10, 8, "clear", false, then, then, null, new String[0]);

    startSchedule();

    assertThat(rows.findByName(GONE)).isEmpty();
    assertThat(rows.findByName(KEPT)).isPresent();
  }

  /**
   * Each check is read on a schedule of its own: a reading that hangs (a replica slow to answer)
   * neither holds another check's evaluations back nor stretches their interval.
   */
  @Test
  void aCheckWhoseReadingHangsDoesNotHoldAnotherBack() throws Exception {
    DataSource dataSource = context.getBean(DataSource.class);
    try (Connection holder = dataSource.getConnection()) {
      try (Statement lock = holder.createStatement()) {
        lock.execute("select pg_advisory_lock(" + LOCK + ")");
      }
      startSchedule();
      try {
        await("the blocked check's reading waits for the lock", () -> lockWaiters(holder) > 0);
        Instant first = evaluatedAt(KEPT);
        await(
            "the other check is evaluated again while that reading waits",
            () -> evaluatedAt(KEPT).isAfter(first) && lockWaiters(holder) > 0);
      } finally {
        try (Statement unlock = holder.createStatement()) {
          unlock.execute("select pg_advisory_unlock(" + LOCK + ")");
        }
      }
    }
  }

  /** Starts evaluating the configured checks, as a worker does at start-up. */
  private void startSchedule() {
    schedule =
        new CheckSchedule(
            context.getBean(ThrottleChecks.class),
            context.getBean(CheckEvaluator.class),
            new ThrottleConfig(true));
    schedule.onStartup(null);
  }

  private Instant evaluatedAt(String check) {
    return rows.findByName(check).map(CheckRow::evaluatedAt).orElse(Instant.EPOCH);
  }

  private static int lockWaiters(Connection connection) throws SQLException {
    try (Statement query = connection.createStatement();
        ResultSet result =
            query.executeQuery(
                "select count(*) from pg_locks where locktype = 'advisory' and not granted")) {
      result.next();
      return result.getInt(1);
    }
  }

  private interface Condition {
    boolean holds() throws Exception;
  }

  /**
   * Waits up to a minute for {@code condition}: generous for a busy machine, never a speed bound.
   */
  private static void await(String what, Condition condition) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within a minute: " + what);
      }
      Thread.sleep(50);
    }
  }
}
