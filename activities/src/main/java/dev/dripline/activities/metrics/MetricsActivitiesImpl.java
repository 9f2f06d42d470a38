package dev.dripline.activities.metrics;

import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.metrics.MetricSnapshotRepository;
import dev.dripline.store.metrics.SnapshotGauges;
import dev.dripline.store.metrics.SnapshotSeries;
import dev.dripline.workflows.metrics.MetricsActivities;
import dev.dripline.workflows.targets.FailureStreak;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link MetricsActivities} on PostgreSQL: computes the gauges of spec §5 that derive from
 * Dripline's tables and replaces table {@code metric_snapshots} with them ({@link
 * MetricSnapshotRepository}), all in one transaction ({@link DataTransactions}), so a reader
 * ({@link SnapshotGauges} in every process) sees either the whole old or the whole new snapshot.
 *
 * <p>"Failing" is decided in SQL with the same rule as {@link FailureStreak#isFailing} (T6): not
 * primed, and a streak of at least {@link FailureStreak#FAILING_THRESHOLD} or needs_resync. Live
 * batches blocked behind failing targets are counted apart from those behind healthy ones, so the
 * pageable gauges ({@code dripline_blocked_*}) mean "slow", never "broken".
 *
 * <p>The run series are labelled by backfill only (never by run): slot holders per backfill, and
 * the batch outcome counters kept in {@code batch_outcome_counters}.
 */
@Singleton
public class MetricsActivitiesImpl implements MetricsActivities {
  /** Serialises snapshots, so two overlapping calls cannot collide on the table's key. */
  static final long SNAPSHOT_LOCK = 0x4452_4950_4d45_5401L;

  /** SQL condition "target t is failing" (T6); parameter: the failing threshold. */
  private static final String FAILING =
      "(t.state <> 'primed' and (t.consecutive_failures >= ? or t.state = 'needs_resync'))";

  private final MetricSnapshotRepository snapshots;
  private final DataTransactions transactions;

  public MetricsActivitiesImpl(MetricSnapshotRepository snapshots, DataTransactions transactions) {
    this.snapshots = snapshots;
    this.transactions = transactions;
  }

  /** One series of the snapshot. */
  record Series(String name, String labels, double value) {}

  @Override
  public int snapshot() {
    return transactions.inTransaction(
        connection -> {
          snapshots.lockForReplace(SNAPSHOT_LOCK);
          List<Series> series = compute(connection);
          snapshots.deleteAll();
          for (Series s : series) {
            snapshots.insert(s.name(), s.labels(), s.value());
          }
          return series.size();
        });
  }

  /** Every series of the snapshot, zeros included, as of the transaction's {@code now()}. */
  static List<Series> compute(Connection connection) throws SQLException {
    List<Series> series = new ArrayList<>();
    Map<String, Long> states =
        countBy(connection, "select state, count(*) from targets group by state");
    for (String state : SnapshotSeries.TARGET_STATES) {
      series.add(
          new Series(
              SnapshotSeries.TARGETS,
              SnapshotSeries.label("state", state),
              states.getOrDefault(state, 0L)));
    }
    Map<String, Long> statuses =
        countBy(connection, "select status, count(*) from runs group by status");
    for (String status : SnapshotSeries.RUN_STATUSES) {
      series.add(
          new Series(
              SnapshotSeries.RUNS,
              SnapshotSeries.label("status", status),
              statuses.getOrDefault(status, 0L)));
    }
    // Blocked = queued behind a target that is not primed; split by whether that target fails.
    try (PreparedStatement blocked =
        connection.prepareStatement(
            "select count(*) filter (where not "
                + FAILING
                + ") as healthy,"
                + " coalesce(extract(epoch from now() - min(l.created_at) filter (where not "
                + FAILING
                + ")), 0) as healthy_age,"
                + " count(*) filter (where "
                + FAILING
                + ") as failing"
                + " from live_batches l join targets t on t.name = l.target_name"
                + " where l.status = 'queued' and t.state <> 'primed'")) {
      blocked.setInt(1, FailureStreak.FAILING_THRESHOLD);
      blocked.setInt(2, FailureStreak.FAILING_THRESHOLD);
      blocked.setInt(3, FailureStreak.FAILING_THRESHOLD);
      try (ResultSet rs = blocked.executeQuery()) {
        rs.next();
        series.add(new Series(SnapshotSeries.BLOCKED_BACKLOG, "", rs.getLong("healthy")));
        series.add(
            new Series(
                SnapshotSeries.BLOCKED_OLDEST_AGE_SECONDS,
                "",
                Math.max(0, rs.getDouble("healthy_age"))));
        series.add(new Series(SnapshotSeries.FAILING_BLOCKED_BACKLOG, "", rs.getLong("failing")));
      }
    }
    // Stuck = failing, from the targets' state alone.
    try (PreparedStatement stuck =
        connection.prepareStatement(
            "select count(*) as stuck,"
                + " coalesce(extract(epoch from now() - min(t.first_failed_at)), 0) as age"
                + " from targets t where "
                + FAILING)) {
      stuck.setInt(1, FailureStreak.FAILING_THRESHOLD);
      try (ResultSet rs = stuck.executeQuery()) {
        rs.next();
        series.add(new Series(SnapshotSeries.STUCK_TARGETS, "", rs.getLong("stuck")));
        series.add(
            new Series(
                SnapshotSeries.STUCK_OLDEST_AGE_SECONDS, "", Math.max(0, rs.getDouble("age"))));
      }
    }
    try (PreparedStatement counter =
        connection.prepareStatement("select value from dripline_counters where name = ?")) {
      counter.setString(1, SnapshotSeries.PLANNING_FAILURES_COUNTER);
      try (ResultSet rs = counter.executeQuery()) {
        series.add(
            new Series(SnapshotSeries.PLANNING_FAILURES_TOTAL, "", rs.next() ? rs.getLong(1) : 0L));
      }
    }
    inflight(connection, series);
    finished(connection, series);
    return series;
  }

  /**
   * Slot holders per backfill: a row for every backfill of the catalogue, 0 when nothing is in
   * flight (a dashboard shows an idle backfill at 0, not "No data"), and for any other backfill
   * while it has an active run or a slot held (a definition no worker publishes any more, whose
   * runs still hold slots).
   */
  private static void inflight(Connection connection, List<Series> series) throws SQLException {
    try (PreparedStatement select =
            connection.prepareStatement(
                "with holders as (select run_id, count(*) as held from batches"
                    + " where status in ('enqueued', 'running') group by run_id),"
                    + " active as (select r.backfill, coalesce(sum(h.held), 0) as inflight"
                    + " from runs r left join holders h on h.run_id = r.id"
                    + " where r.status in ('pending', 'running', 'paused') or h.run_id is not null"
                    + " group by r.backfill)"
                    + " select coalesce(d.name, a.backfill) as backfill,"
                    + " coalesce(a.inflight, 0) as inflight"
                    + " from backfill_definitions d full join active a on a.backfill = d.name"
                    + " order by 1");
        ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        series.add(
            new Series(
                SnapshotSeries.BATCHES_INFLIGHT,
                SnapshotSeries.label("backfill", rs.getString("backfill")),
                rs.getLong("inflight")));
      }
    }
  }

  /** Batch outcome counters: every outcome (zeros included) of each backfill that counted one. */
  private static void finished(Connection connection, List<Series> series) throws SQLException {
    Map<String, Map<String, Long>> counts = new LinkedHashMap<>();
    try (PreparedStatement select =
            connection.prepareStatement(
                "select backfill, outcome, sum(value) as value from batch_outcome_counters"
                    + " group by backfill, outcome order by backfill, outcome");
        ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        counts
            .computeIfAbsent(rs.getString("backfill"), b -> new LinkedHashMap<>())
            .put(rs.getString("outcome"), rs.getLong("value"));
      }
    }
    counts.forEach(
        (backfill, byOutcome) -> {
          for (String outcome : SnapshotSeries.BATCH_OUTCOMES) {
            series.add(
                new Series(
                    SnapshotSeries.BATCHES_FINISHED_TOTAL,
                    SnapshotSeries.labels("backfill", backfill, "outcome", outcome),
                    byOutcome.getOrDefault(outcome, 0L)));
          }
        });
  }

  private static Map<String, Long> countBy(Connection connection, String sql) throws SQLException {
    Map<String, Long> counts = new LinkedHashMap<>();
    try (PreparedStatement select = connection.prepareStatement(sql);
        ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        counts.put(rs.getString(1), rs.getLong(2));
      }
    }
    return counts;
  }
}
