package dev.dripline.activities.throttle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dripline.runtime.throttle.ThrottleCheck;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.db.Database;
import dev.dripline.store.throttle.CheckLimits;
import dev.dripline.store.throttle.CheckOverrideRepository;
import dev.dripline.store.throttle.CheckRow;
import dev.dripline.store.throttle.CheckRowRepository;
import dev.dripline.store.throttle.OnUnknown;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.annotation.Property;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Health checks evaluated against real PostgreSQL, time driven by the test. */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
@Property(name = "dripline.throttle.evaluate", value = "false")
@Property(name = "dripline.throttle.checks.probe.kind", value = "sql")
@Property(name = "dripline.throttle.checks.probe.query", value = "select v from throttle_it_probe")
@Property(name = "dripline.throttle.checks.probe.threshold", value = "10")
@Property(name = "dripline.throttle.checks.probe.applies-to", value = "alpha,beta")
@Property(name = "dripline.throttle.checks.broken.kind", value = "sql")
@Property(name = "dripline.throttle.checks.broken.query", value = "select 1 / 0")
@Property(name = "dripline.throttle.checks.broken.threshold", value = "1")
@Property(name = "dripline.throttle.checks.slow.kind", value = "sql")
@Property(name = "dripline.throttle.checks.slow.query", value = "select 1 from pg_sleep(5)")
@Property(name = "dripline.throttle.checks.slow.threshold", value = "1")
@Property(name = "dripline.throttle.checks.slow.timeout", value = "200ms")
@Property(name = "dripline.throttle.checks.slow.on-unknown", value = "proceed")
@Property(name = "dripline.throttle.checks.busy.kind", value = "active-queries")
@Property(name = "dripline.throttle.checks.busy.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.busy.resume-below", value = "0.5")
@Property(name = "dripline.throttle.checks.stuck.kind", value = "active-queries")
@Property(name = "dripline.throttle.checks.stuck.older-than", value = "1h")
@Property(name = "dripline.throttle.checks.stuck.threshold", value = "1000")
@Property(name = "dripline.throttle.checks.lag.kind", value = "replica-lag")
@Property(name = "dripline.throttle.checks.lag.threshold", value = "30")
@Property(name = "dripline.throttle.checks.replica.kind", value = "replica-lag")
@Property(name = "dripline.throttle.checks.replica.threshold", value = "30")
@Property(name = "dripline.throttle.checks.replica.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.replica.user", value = "${datasources.default.username}")
@Property(
    name = "dripline.throttle.checks.replica.password",
    value = "${datasources.default.password}")
class CheckEvaluatorIT {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final List<String> NAMES =
      List.of("probe", "broken", "slow", "busy", "stuck", "lag", "replica");

  @Inject CheckEvaluator evaluator;
  @Inject CheckReader reader;
  @Inject ThrottleChecks checks;
  @Inject CheckRowRepository rows;
  @Inject CheckOverrideRepository overrides;
  @Inject Database database;

  @BeforeEach
  void setUp() {
    database.runInTransaction(
        c -> {
          try (Statement s = c.createStatement()) {
            s.execute("create table if not exists throttle_it_probe (v double precision)");
            s.execute("truncate throttle_it_probe");
          }
        });
    NAMES.forEach(rows::deleteByName);
    NAMES.forEach(overrides::deleteByName);
  }

  @AfterEach
  void tearDown() {
    NAMES.forEach(rows::deleteByName);
    NAMES.forEach(overrides::deleteByName);
  }

  private void probe(double value) {
    database.runInTransaction(
        c -> {
          try (Statement s = c.createStatement()) {
            s.execute("truncate throttle_it_probe");
          }
          try (PreparedStatement s =
              c.prepareStatement("insert into throttle_it_probe values (?)")) {
            s.setDouble(1, value);
            s.execute();
          }
        });
  }

  private CheckRow evaluate(String name, Instant at) {
    return evaluator.evaluateIfDue(checks.named(name).orElseThrow(), at).orElseThrow();
  }

  @Test
  void configurationBindsWithDefaults() {
    ThrottleCheck probe = checks.named("probe").orElseThrow();

    assertThat(probe.limits()).isEqualTo(new CheckLimits(10, 8, OnUnknown.HOLD));
    assertThat(probe.interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(probe.timeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(probe.appliesTo()).containsExactly("alpha", "beta");
    assertThat(checks.named("stuck").orElseThrow().olderThan()).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void anSqlCheckGoesOverStaysOverInTheBandAndClearsBelowResume() {
    probe(12);
    CheckRow over = evaluate("probe", T0);
    probe(9);
    CheckRow band = evaluate("probe", T0.plusSeconds(5));
    probe(7);
    CheckRow clear = evaluate("probe", T0.plusSeconds(10));

    assertThat(over.value()).isEqualTo(12.0);
    assertThat(over.state()).isEqualTo("over");
    assertThat(over.holding()).isTrue();
    assertThat(band.state()).isEqualTo("over");
    assertThat(band.holding()).isTrue();
    assertThat(band.since()).isEqualTo(T0);
    assertThat(clear.state()).isEqualTo("clear");
    assertThat(clear.holding()).isFalse();
    assertThat(clear.since()).isEqualTo(T0.plusSeconds(10));
    CheckRow stored = rows.findByName("probe").orElseThrow();
    assertThat(stored.value()).isEqualTo(7.0);
    assertThat(stored.threshold()).isEqualTo(10.0);
    assertThat(stored.resumeBelow()).isEqualTo(8.0);
    assertThat(stored.evaluatedAt()).isEqualTo(T0.plusSeconds(10));
    assertThat(stored.since()).isEqualTo(T0.plusSeconds(10));
  }

  @Test
  void aRuntimeOverrideAppliesFromTheNextEvaluation() {
    probe(12);
    CheckRow configured = evaluate("probe", T0);
    overrides.change("probe", 20.0, null, "operator");
    CheckRow raised = evaluate("probe", T0.plusSeconds(5));
    overrides.change("probe", null, 15.0, "operator");
    probe(14);
    CheckRow band = evaluate("probe", T0.plusSeconds(10));

    assertThat(configured.holding()).isTrue();
    assertThat(raised.threshold()).isEqualTo(20.0);
    assertThat(raised.resumeBelow()).as("kept from configuration").isEqualTo(8.0);
    assertThat(raised.state()).as("12 is in the band 8..20 after a hold").isEqualTo("over");
    assertThat(band.threshold()).as("the earlier override kept").isEqualTo(20.0);
    assertThat(band.resumeBelow()).isEqualTo(15.0);
    assertThat(band.state()).as("14 is below the new resumeBelow").isEqualTo("clear");
    assertThat(band.holding()).isFalse();
  }

  @Test
  void theRowSaysWhichBackfillsTheCheckAppliesTo() throws SQLException {
    probe(1);
    evaluate("probe", T0);
    evaluate("broken", T0);

    assertThat(appliesTo("probe")).containsExactly("alpha", "beta");
    assertThat(appliesTo("broken")).as("every backfill").isNull();
  }

  private String[] appliesTo(String name) throws SQLException {
    try (Connection c = database.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("select applies_to from throttle_checks where name = ?")) {
      s.setString(1, name);
      try (ResultSet r = s.executeQuery()) {
        assertThat(r.next()).isTrue();
        java.sql.Array array = r.getArray(1);
        return array == null ? null : (String[]) array.getArray();
      }
    }
  }

  @Test
  void noRowIsUnknownAndHolds() {
    CheckRow row = evaluate("probe", T0);

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.holding()).isTrue();
    assertThat(row.error()).contains("no row");
  }

  @Test
  void aQueryThatErrorsIsUnknownAndHolds() {
    CheckRow row = evaluate("broken", T0);

    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.holding()).isTrue();
    assertThat(row.value()).isNull();
    assertThat(row.error()).contains("division by zero");
  }

  @Test
  void aQuerySlowerThanItsTimeoutIsUnknown() {
    long started = System.nanoTime();
    CheckRow row = evaluate("slow", T0);

    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.holding()).as("on-unknown: proceed").isFalse();
    assertThat(row.error()).contains("statement timeout");
  }

  @Test
  void anSqlCheckRunsReadOnly() {
    ThrottleCheck writer =
        ThrottleChecks.validate(
                List.of(
                    new dev.dripline.runtime.throttle.ThrottleCheckConfig(
                        "writer",
                        "sql",
                        1.0,
                        null,
                        Duration.ofSeconds(5),
                        "hold",
                        null,
                        "insert into throttle_it_probe values (1) returning v",
                        Duration.ofSeconds(2),
                        null,
                        null,
                        null,
                        null,
                        null)))
            .get(0);

    CheckReading reading = reader.read(writer);

    assertThat(reading.value()).isNull();
    assertThat(reading.error()).contains("read-only transaction");
  }

  @Test
  void activeQueriesCountsAnotherBackendRunningAQuery() throws Exception {
    int[] pid = new int[1];
    try (Connection sleeper = database.dataSource().getConnection()) {
      try (Statement s = sleeper.createStatement();
          ResultSet r = s.executeQuery("select pg_backend_pid()")) {
        r.next();
        pid[0] = r.getInt(1);
      }
      CompletableFuture<Void> sleeping =
          CompletableFuture.runAsync(
              () -> {
                try (Statement s = sleeper.createStatement()) {
                  s.execute("select pg_sleep(60)");
                } catch (SQLException e) {
                  // cancelled below
                }
              });
      await().atMost(Duration.ofSeconds(10)).until(() -> active(pid[0]));

      CheckRow busy = evaluate("busy", T0);
      CheckRow stuck = evaluate("stuck", T0);

      cancel(pid[0]);
      sleeping.get();
      assertThat(busy.value()).isGreaterThanOrEqualTo(1.0);
      assertThat(busy.state()).isEqualTo("over");
      assertThat(busy.holding()).isTrue();
      assertThat(stuck.value()).as("older than 1h: not the new sleeper").isLessThan(busy.value());
      assertThat(stuck.state()).isEqualTo("clear");
    }
  }

  @Test
  void replicaLagOnAPrimaryWithoutReplicasIsUnknown() {
    CheckRow row = evaluate("lag", T0);

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.holding()).isTrue();
    assertThat(row.error()).contains("NULL");
  }

  @Test
  void replicaLagOnADatabaseThatIsNoReplicaIsUnknown() {
    CheckRow row = evaluate("replica", T0);

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.error()).contains("NULL");
  }

  @Test
  void aCheckIsEvaluatedOncePerInterval() {
    probe(1);
    ThrottleCheck probe = checks.named("probe").orElseThrow();

    Optional<CheckRow> first = evaluator.evaluateIfDue(probe, T0);
    Optional<CheckRow> tooSoon = evaluator.evaluateIfDue(probe, T0.plusSeconds(2));
    Optional<CheckRow> next = evaluator.evaluateIfDue(probe, T0.plusMillis(4_600));

    assertThat(first).isPresent();
    assertThat(tooSoon).isEmpty();
    assertThat(next).isPresent();
    assertThat(rows.findByName("probe").orElseThrow().evaluatedAt())
        .isEqualTo(T0.plusMillis(4_600));
  }

  @Test
  void aCheckAnotherWorkerIsEvaluatingIsSkipped() throws SQLException {
    ThrottleCheck probe = checks.named("probe").orElseThrow();
    try (Connection other = database.dataSource().getConnection();
        Statement s = other.createStatement()) {
      s.execute("select pg_advisory_lock(hashtext('dripline.throttle'), hashtext('probe'))");

      assertThat(evaluator.evaluateIfDue(probe, T0)).isEmpty();

      s.execute("select pg_advisory_unlock(hashtext('dripline.throttle'), hashtext('probe'))");
    }
    assertThat(rows.findByName("probe")).isEmpty();
    assertThat(evaluator.evaluateIfDue(probe, T0)).isPresent();
  }

  @Test
  void evaluateNowRecordsEveryDueCheck() {
    probe(3);

    List<CheckRow> recorded = evaluator.evaluateNow(T0);

    assertThat(recorded).extracting(CheckRow::name).containsExactlyInAnyOrderElementsOf(NAMES);
    assertThat(rows.findAllOrdered()).extracting(CheckRow::name).containsAll(NAMES);
  }

  @Test
  void anInvalidCheckFailsStartUpNamingCheckAndField() {
    Map<String, Object> properties =
        Map.of(
            "dripline.throttle.checks.bad.kind", "sql",
            "dripline.throttle.checks.bad.query", "select 1");

    assertThatThrownBy(() -> ApplicationContext.run(properties, "test").close())
        .hasStackTraceContaining("dripline.throttle.checks.bad.threshold: is required");
  }

  private boolean active(int pid) {
    return database.inTransaction(
        c -> {
          try (PreparedStatement s =
              c.prepareStatement(
                  "select count(*) from pg_stat_activity where pid = ? and state = 'active'")) {
            s.setInt(1, pid);
            try (ResultSet r = s.executeQuery()) {
              r.next();
              return r.getInt(1) == 1;
            }
          }
        });
  }

  private void cancel(int pid) {
    database.runInTransaction(
        c -> {
          try (PreparedStatement s = c.prepareStatement("select pg_cancel_backend(?)")) {
            s.setInt(1, pid);
            s.execute();
          }
        });
  }
}
