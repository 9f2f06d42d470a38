package dev.dripline.activities.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.TargetFixtures;
import dev.dripline.store.metrics.SnapshotGauges;
import dev.dripline.store.metrics.SnapshotSeries;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The snapshot is global, and other tests share the database, so these tests measure what their own
 * crafted rows add to it.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class MetricsActivitiesIT {
  @Inject MetricsActivitiesImpl metrics;
  @Inject SnapshotGauges gauges;
  @Inject PrometheusMeterRegistry prometheus;
  @Inject TargetFixtures fixtures;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  private Map<String, Double> snapshot() {
    int written = metrics.snapshot();
    // 16 fixed series, plus those labelled by backfill or pool, which depend on other tests' rows.
    Map<String, Object> labelled =
        fixtures.row(
            "select count(*) as n from metric_snapshots where name = any (string_to_array(?, ','))",
            String.join(
                ",",
                java.util.stream.Stream.concat(
                        SnapshotSeries.LABELLED_BY_BACKFILL.stream(),
                        SnapshotSeries.LABELLED_BY_POOL.stream())
                    .toList()));
    assertThat(written).isEqualTo(4 + 6 + 6 + ((Long) labelled.get("n")).intValue());
    Map<String, Double> values = new HashMap<>();
    for (Map<String, Object> row :
        fixtures.rows("select name, labels, value from metric_snapshots")) {
      String labels = (String) row.get("labels");
      values.put(
          row.get("name") + (labels.isEmpty() ? "" : "{" + labels + "}"),
          (Double) row.get("value"));
    }
    return values;
  }

  private String target(String state, int streak, String firstFailedAgo, int queued) {
    String name = fixtures.target("metrics", KeysBackfill.NAME, "{\"items\":1}", null, state);
    fixtures.update(
        "update targets set consecutive_failures = ?,"
            + " first_failed_at = now() - cast(? as interval) where name = ?",
        streak,
        firstFailedAgo,
        name);
    for (int i = 0; i < queued; i++) {
      fixtures.liveBatch(name, "{}");
    }
    return name;
  }

  @Test
  void separatesHealthyFromFailingBacklogAndCountsStuckTargets() {
    Map<String, Double> before = snapshot();
    // Healthy: blocked, pageable.
    String healthy = target("pending_backfill", 2, null, 2);
    fixtures.update(
        "update live_batches set created_at = now() - interval '2 hours' where target_name = ?",
        healthy);
    fixtures.liveBatch(healthy, "{}");
    fixtures.update(
        "update live_batches set status = 'applied' where id = (select max(id) from live_batches"
            + " where target_name = ?)",
        healthy);
    target("backfilling", 0, null, 1);
    // Failing: streak at the threshold, or needs_resync whatever the streak.
    target("pending_backfill", 3, "10 days", 3);
    target("needs_resync", 0, null, 1);
    // Primed: never failing, never blocked, whatever its streak.
    target("primed", 10, "20 days", 4);

    Map<String, Double> after = snapshot();

    assertThat(delta(before, after, "dripline_blocked_backlog")).isEqualTo(3);
    assertThat(delta(before, after, "dripline_failing_blocked_backlog")).isEqualTo(4);
    assertThat(delta(before, after, "dripline_stuck_targets")).isEqualTo(2);
    assertThat(delta(before, after, "dripline_targets{state=pending_backfill}")).isEqualTo(2);
    assertThat(delta(before, after, "dripline_targets{state=backfilling}")).isEqualTo(1);
    assertThat(delta(before, after, "dripline_targets{state=primed}")).isEqualTo(1);
    assertThat(delta(before, after, "dripline_targets{state=needs_resync}")).isEqualTo(1);
    assertThat(after.get("dripline_blocked_oldest_age_seconds")).isGreaterThanOrEqualTo(7200);
    assertThat(after.get("dripline_stuck_oldest_age_seconds"))
        .isGreaterThanOrEqualTo(10 * 86400)
        // the primed target's older streak does not count
        .satisfies(
            age -> {
              if (before.get("dripline_stuck_oldest_age_seconds") < 20 * 86400) {
                assertThat(age).isLessThan(20 * 86400);
              }
            });
    for (String status : SnapshotSeries.RUN_STATUSES) {
      assertThat(after).containsKey("dripline_runs{status=" + status + "}");
    }
    assertThat(after).containsKey("dripline_planning_failures_total");
  }

  private static double delta(Map<String, Double> before, Map<String, Double> after, String key) {
    assertThat(after).containsKey(key);
    return after.get(key) - before.get(key);
  }

  @Test
  void everyCataloguedBackfillHasAnInflightSeriesAtZeroWhenNothingIsInFlight() {
    String idle = TargetFixtures.uniqueName("metrics-idle");
    fixtures.update(
        "insert into backfill_definitions (name, description, options_schema,"
            + " default_batch_size) values (?, 'never run', '[]'::jsonb, 10)",
        idle);
    try {
      metrics.snapshot();
      gauges.refresh();

      Map<String, Object> row =
          fixtures.row(
              "select value from metric_snapshots where name = ? and labels = ?",
              SnapshotSeries.BATCHES_INFLIGHT,
              SnapshotSeries.label("backfill", idle));
      assertThat(row).as("the snapshot's inflight row of a catalogued, idle backfill").isNotNull();
      assertThat((Double) row.get("value")).isZero();
      assertThat(prometheus.scrape().lines())
          .contains("dripline_batches_inflight{backfill=\"" + idle + "\"} 0.0");
    } finally {
      fixtures.update("delete from backfill_definitions where name = ?", idle);
    }
  }

  @Test
  void eachPoolsSlotsInUseAndWaitersAreExported() {
    String pool = TargetFixtures.uniqueName("metrics-pool");
    String backfill = TargetFixtures.uniqueName("metrics-pool-backfill");
    String target = fixtures.target("metrics", backfill, "{\"items\":1}", null, "backfilling");
    long run = fixtures.run(target, backfill, "running");
    fixtures.update("insert into pools (name, size) values (?, 3)", pool);
    fixtures.update("update runs set pool = ? where id = ?", pool, run);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " select run_id, n, dripline_bigint_key(n), dripline_bigint_key(n), 1, status"
            + " from (values (?::bigint, 1, 'running'), (?::bigint, 2, 'enqueued'),"
            + " (?::bigint, 3, 'pending')) v(run_id, n, status)",
        run,
        run,
        run);
    fixtures.update(
        "insert into pool_waiters (run_id, pool, since, seen_at) values (?, ?, now(), now())",
        run,
        pool);
    try {
      Map<String, Double> values = snapshot();
      gauges.refresh();

      String labels = "{" + SnapshotSeries.label("pool", pool) + "}";
      assertThat(values.get(SnapshotSeries.POOL_IN_USE + labels)).isEqualTo(2.0);
      assertThat(values.get(SnapshotSeries.POOL_WAITING + labels)).isEqualTo(1.0);
      assertThat(prometheus.scrape().lines().toList())
          .contains("dripline_pool_in_use{pool=\"" + pool + "\"} 2.0")
          .contains("dripline_pool_waiting{pool=\"" + pool + "\"} 1.0");
    } finally {
      fixtures.update("delete from pools where name = ?", pool);
    }
  }

  @Test
  void runsHeldNowAndTheirHeldTimeAreExportedPerBackfill() {
    String backfill = TargetFixtures.uniqueName("metrics-held");
    String check = TargetFixtures.uniqueName("metrics-held-check");
    String target = fixtures.target("metrics", backfill, "{\"items\":1}", null, "backfilling");
    long held = fixtures.run(target, backfill, "running");
    fixtures.update(
        "update runs set throttled_millis = 2500, held_since = now() - interval '2 seconds'"
            + " where id = ?",
        held);
    fixtures.update(
        "insert into throttle_checks (name, kind, value, threshold, resume_below, state, holding,"
            + " since, evaluated_at, applies_to) values (?, 'sql', 12, 10, 8, 'over', true, now(),"
            + " now(), array[?])",
        check,
        backfill);
    try {
      Map<String, Double> values = snapshot();
      gauges.refresh();

      String labels = "{" + SnapshotSeries.label("backfill", backfill) + "}";
      assertThat(values.get(SnapshotSeries.RUNS_THROTTLED + labels)).isEqualTo(1.0);
      assertThat(values.get(SnapshotSeries.THROTTLED_SECONDS_TOTAL + labels))
          .isGreaterThanOrEqualTo(4.5);
      List<String> scrape = prometheus.scrape().lines().toList();
      assertThat(scrape)
          .contains("# TYPE dripline_runs_throttled gauge")
          .contains("# TYPE dripline_throttled_seconds_total counter")
          .contains("dripline_runs_throttled{backfill=\"" + backfill + "\"} 1.0");

      fixtures.update("update throttle_checks set holding = false where name = ?", check);
      assertThat(snapshot().get(SnapshotSeries.RUNS_THROTTLED + labels))
          .as("nothing holds it any more")
          .isZero();
    } finally {
      fixtures.update("delete from throttle_checks where name = ?", check);
    }
  }

  @Test
  void processGaugesExportTheSnapshotUnderTheContractNames() {
    metrics.snapshot();
    gauges.refresh();
    Map<String, Object> targets =
        fixtures.row(
            "select value from metric_snapshots where name = 'dripline_targets'"
                + " and labels = 'state=primed'");
    Map<String, Object> failures =
        fixtures.row(
            "select value from metric_snapshots where name = 'dripline_planning_failures_total'");

    String scrape = prometheus.scrape();

    List<String> lines = scrape.lines().toList();
    for (String status : SnapshotSeries.RUN_STATUSES) {
      assertThat(lines).anyMatch(l -> l.startsWith("dripline_runs{status=\"" + status + "\"} "));
    }
    for (String state : SnapshotSeries.TARGET_STATES) {
      assertThat(lines).anyMatch(l -> l.startsWith("dripline_targets{state=\"" + state + "\"} "));
    }
    for (String gauge :
        List.of(
            "dripline_blocked_backlog",
            "dripline_blocked_oldest_age_seconds",
            "dripline_failing_blocked_backlog",
            "dripline_stuck_targets",
            "dripline_stuck_oldest_age_seconds")) {
      assertThat(lines).contains("# TYPE " + gauge + " gauge");
      assertThat(lines).anyMatch(l -> l.startsWith(gauge + " "));
    }
    assertThat(lines).contains("# TYPE dripline_planning_failures_total counter");
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith("dripline_planning_failures_total ")
                    && Double.parseDouble(l.substring(l.indexOf(' ') + 1))
                        == (Double) failures.get("value"));
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith("dripline_targets{state=\"primed\"} ")
                    && Double.parseDouble(l.substring(l.indexOf(' ') + 1))
                        == (Double) targets.get("value"));
    assertThat(scrape).doesNotContain("_seconds_seconds").doesNotContain("_total_total");
    // promtool check metrics flags a family without help text.
    lines.stream()
        .filter(l -> l.startsWith("# TYPE dripline_"))
        .map(l -> l.split(" ")[2])
        .forEach(
            family ->
                assertThat(lines)
                    .as("help text of " + family)
                    .anyMatch(
                        l ->
                            l.startsWith("# HELP " + family + " ")
                                && l.length() > 9 + family.length()));
  }
}
