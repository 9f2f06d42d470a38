package dev.dripline.activities.throttle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.catalogue.CatalogueRepository;
import dev.dripline.store.db.Database;
import dev.dripline.store.throttle.CheckRow;
import dev.dripline.store.throttle.CheckRowRepository;
import io.micronaut.context.annotation.Property;
import io.micronaut.context.annotation.Value;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@code autovacuum} health check over real PostgreSQL and a real autovacuum worker: table
 * {@code av_it_hot} is given many dead rows and storage parameters that make autovacuum take it up
 * at the launcher's next visit (threshold 0) and crawl through it (cost limit 1, delay 100 ms), so
 * the worker stays while the checks are read; {@code av_it_cold} has autovacuum off, so no worker
 * is ever on it. The worker is cancelled by the {@code drop table} at the end (autovacuum gives way
 * to a lock it blocks).
 *
 * <p>The checks read through role {@code dripline_monitor} (a member of {@code pg_monitor}, made by
 * {@code bin/lib.sh}): role {@code dripline} cannot see which table another role's backend is on.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Property(name = "dripline.throttle.evaluate", value = "false")
@Property(name = "dripline.throttle.checks.vacuum-hot.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-hot.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-hot.applies-to", value = "av.hot")
@Property(name = "dripline.throttle.checks.vacuum-hot.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.vacuum-hot.user", value = AutovacuumCheckIT.USER)
@Property(name = "dripline.throttle.checks.vacuum-hot.password", value = AutovacuumCheckIT.PASSWORD)
@Property(name = "dripline.throttle.checks.vacuum-cold.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-cold.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-cold.applies-to", value = "av.cold")
@Property(name = "dripline.throttle.checks.vacuum-cold.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.vacuum-cold.user", value = AutovacuumCheckIT.USER)
@Property(
    name = "dripline.throttle.checks.vacuum-cold.password",
    value = AutovacuumCheckIT.PASSWORD)
@Property(name = "dripline.throttle.checks.vacuum-named.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-named.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-named.applies-to", value = "av.unpublished")
@Property(name = "dripline.throttle.checks.vacuum-named.tables", value = "AV_IT_HOT")
@Property(name = "dripline.throttle.checks.vacuum-named.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.vacuum-named.user", value = AutovacuumCheckIT.USER)
@Property(
    name = "dripline.throttle.checks.vacuum-named.password",
    value = AutovacuumCheckIT.PASSWORD)
@Property(name = "dripline.throttle.checks.vacuum-all.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-all.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-all.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.vacuum-all.user", value = AutovacuumCheckIT.USER)
@Property(name = "dripline.throttle.checks.vacuum-all.password", value = AutovacuumCheckIT.PASSWORD)
@Property(name = "dripline.throttle.checks.vacuum-own-role.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-own-role.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-own-role.applies-to", value = "av.hot")
@Property(name = "dripline.throttle.checks.vacuum-nothing.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-nothing.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-nothing.applies-to", value = "av.none")
@Property(name = "dripline.throttle.checks.vacuum-gone.kind", value = "autovacuum")
@Property(name = "dripline.throttle.checks.vacuum-gone.threshold", value = "0.5")
@Property(name = "dripline.throttle.checks.vacuum-gone.applies-to", value = "av.unpublished")
@Property(name = "dripline.throttle.checks.vacuum-gone.tables", value = "av_it_gone")
@Property(name = "dripline.throttle.checks.vacuum-gone.url", value = "${datasources.default.url}")
@Property(name = "dripline.throttle.checks.vacuum-gone.user", value = AutovacuumCheckIT.USER)
@Property(
    name = "dripline.throttle.checks.vacuum-gone.password",
    value = AutovacuumCheckIT.PASSWORD)
class AutovacuumCheckIT {
  static final String USER = "${DRIPLINE_TEST_MONITOR_USER:dripline_monitor}";
  static final String PASSWORD = "${DRIPLINE_TEST_MONITOR_PASSWORD:dripline}";

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  /** The launcher visits each database once per autovacuum_naptime (1 min by default). */
  private static final Duration WORKER_WITHIN = Duration.ofMinutes(3);

  private static final List<String> DEFINITIONS = List.of("av.hot", "av.cold", "av.none");
  private static final List<String> CHECKS =
      List.of(
          "vacuum-hot",
          "vacuum-cold",
          "vacuum-named",
          "vacuum-all",
          "vacuum-own-role",
          "vacuum-nothing",
          "vacuum-gone");

  @Inject CheckEvaluator evaluator;
  @Inject ThrottleChecks checks;
  @Inject CheckRowRepository rows;
  @Inject CatalogueRepository catalogue;
  @Inject RunFixtures fixtures;
  @Inject Database database;

  @Value("${datasources.default.url}")
  String url;

  @Value(USER)
  String monitorUser;

  @Value(PASSWORD)
  String monitorPassword;

  @BeforeAll
  void publishDefinitionsAndMakeDeadRows() {
    dropTables();
    publish("av.hot", "public.av_it_hot");
    publish("av.cold", "av_it_cold");
    publish("av.none");
    CHECKS.forEach(rows::deleteByName);
    database.runInTransaction(
        c -> {
          try (Statement s = c.createStatement()) {
            s.execute(
                """
                create table av_it_hot (id int, pad text) with (
                  autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
                  autovacuum_vacuum_insert_threshold = 0,
                  autovacuum_vacuum_insert_scale_factor = 0,
                  autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1)
                """);
            s.execute(
                "insert into av_it_hot select g, repeat('x', 100)"
                    + " from generate_series(1, 200000) g");
            s.execute("create table av_it_cold (id int) with (autovacuum_enabled = false)");
            s.execute("insert into av_it_cold select generate_series(1, 1000)");
          }
        });
    // Committed apart, so the dead rows are reported to the statistics the launcher reads.
    database.runInTransaction(
        c -> {
          try (Statement s = c.createStatement()) {
            s.execute("delete from av_it_hot");
            s.execute("delete from av_it_cold");
          }
        });
  }

  @AfterAll
  void dropTablesAndForget() {
    CHECKS.forEach(rows::deleteByName);
    for (String name : DEFINITIONS) {
      fixtures.update("delete from backfill_definitions where name = ?", name);
    }
    dropTables();
  }

  /** Drops both tables; a worker on one is cancelled when the drop waits for it. */
  private void dropTables() {
    database.runInTransaction(
        c -> {
          try (Statement s = c.createStatement()) {
            s.execute("set local lock_timeout = '60s'");
            s.execute("drop table if exists av_it_hot, av_it_cold");
          }
        });
  }

  private void publish(String name, String... tables) {
    catalogue.publish(
        name,
        "autovacuum check test",
        "[]",
        10,
        null,
        "[{\"name\":\"id\",\"type\":\"bigint\"}]",
        null,
        null,
        null,
        null,
        null,
        tables,
        0,
        null);
  }

  private CheckRow evaluate(String name) {
    return evaluator.evaluateIfDue(checks.named(name).orElseThrow(), T0).orElseThrow();
  }

  /** Autovacuum workers on {@code av_it_hot} now, as role dripline_monitor sees them. */
  private int workersOnHot() throws SQLException {
    try (Connection c = DriverManager.getConnection(url, monitorUser, monitorPassword);
        PreparedStatement s =
            c.prepareStatement(
                """
                select count(*) from pg_stat_progress_vacuum p
                join pg_stat_activity a on a.pid = p.pid
                where a.backend_type = 'autovacuum worker' and p.datname = current_database()
                  and p.relid = to_regclass('av_it_hot')
                """);
        ResultSet r = s.executeQuery()) {
      r.next();
      return r.getInt(1);
    }
  }

  @Test
  void aWorkerOnADeclaredTableHoldsAndOneElsewhereDoesNot() throws SQLException {
    await("an autovacuum worker on av_it_hot")
        .atMost(WORKER_WITHIN)
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> workersOnHot() >= 1);

    CheckRow hot = evaluate("vacuum-hot");
    CheckRow cold = evaluate("vacuum-cold");
    CheckRow named = evaluate("vacuum-named");
    CheckRow all = evaluate("vacuum-all");
    int stillThere = workersOnHot();

    assertThat(stillThere).as("the worker ran throughout the readings").isGreaterThanOrEqualTo(1);
    assertThat(hot.value()).as("declared as public.av_it_hot").isGreaterThanOrEqualTo(1.0);
    assertThat(hot.state()).isEqualTo("over");
    assertThat(hot.holding()).isTrue();
    assertThat(cold.value()).as("autovacuum is off on av_it_cold").isEqualTo(0.0);
    assertThat(cold.state()).isEqualTo("clear");
    assertThat(cold.holding()).isFalse();
    assertThat(named.value()).as("the check's own tables: AV_IT_HOT").isGreaterThanOrEqualTo(1.0);
    assertThat(all.value()).as("every published definition's tables").isGreaterThanOrEqualTo(1.0);
    assertThat(holds("av.hot")).contains("vacuum-hot").doesNotContain("vacuum-cold");
    assertThat(holds("av.cold")).doesNotContain("vacuum-hot", "vacuum-cold");
  }

  @Test
  void aRoleThatCannotSeeWorkersTablesReadsUnknown() {
    // Role dripline (Dripline's own connection) is no member of pg_read_all_stats.
    CheckRow row = evaluate("vacuum-own-role");

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.holding()).isTrue();
    assertThat(row.error()).contains("pg_read_all_stats");
  }

  @Test
  void backfillsThatDeclareNoTableReadUnknown() {
    CheckRow row = evaluate("vacuum-nothing");

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.error()).contains("no table to watch");
  }

  @Test
  void tablesThatDoNotExistReadUnknown() {
    CheckRow row = evaluate("vacuum-gone");

    assertThat(row.value()).isNull();
    assertThat(row.state()).isEqualTo("unknown");
    assertThat(row.error()).contains("none of the watched tables exists").contains("av_it_gone");
  }

  /** What holds a run of {@code backfill} now, as the claims read it. */
  private List<String> holds(String backfill) {
    return database.inTransaction(
        c -> {
          try (PreparedStatement s = c.prepareStatement("select dripline_run_holds(?)")) {
            s.setString(1, backfill);
            try (ResultSet r = s.executeQuery()) {
              r.next();
              return List.of((String[]) r.getArray(1).getArray());
            }
          }
        });
  }
}
