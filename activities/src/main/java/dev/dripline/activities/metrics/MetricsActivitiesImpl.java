package dev.dripline.activities.metrics;

import dev.dripline.store.counters.BatchOutcomeCounterRepository;
import dev.dripline.store.counters.DriplineCounterRepository;
import dev.dripline.store.counters.OutcomeCount;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.metrics.GroupCount;
import dev.dripline.store.metrics.MetricSnapshotRepository;
import dev.dripline.store.metrics.SnapshotGauges;
import dev.dripline.store.metrics.SnapshotSeries;
import dev.dripline.store.pool.PoolRepository;
import dev.dripline.store.pool.PoolView;
import dev.dripline.store.run.BackfillInflight;
import dev.dripline.store.run.BackfillThrottle;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.BlockedBacklog;
import dev.dripline.store.targets.LiveBatchRepository;
import dev.dripline.store.targets.StuckTargets;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.workflows.metrics.MetricsActivities;
import dev.dripline.workflows.targets.FailureStreak;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link MetricsActivities} on PostgreSQL: computes the gauges of spec §5 that derive from
 * Dripline's tables and replaces table {@code metric_snapshots} with them ({@link
 * MetricSnapshotRepository}), all in one transaction ({@link DataTransactions}), so a reader
 * ({@link SnapshotGauges} in every process) sees either the whole old or the whole new snapshot.
 * Each read is its table's repository's, and joins that transaction: it reads one snapshot of the
 * tables.
 *
 * <p>"Failing" is decided in SQL ({@link TargetRepository#FAILING}) with the same rule as {@link
 * FailureStreak#isFailing} (T6): not primed, and a streak of at least {@link
 * FailureStreak#FAILING_THRESHOLD} or needs_resync. Live batches blocked behind failing targets are
 * counted apart from those behind healthy ones, so the pageable gauges ({@code dripline_blocked_*})
 * mean "slow", never "broken".
 *
 * <p>The run series are labelled by backfill only (never by run): slot holders per backfill, and
 * the batch outcome counters kept in {@code batch_outcome_counters}.
 */
@Singleton
public class MetricsActivitiesImpl implements MetricsActivities {
  /** Serialises snapshots, so two overlapping calls cannot collide on the table's key. */
  static final long SNAPSHOT_LOCK = 0x4452_4950_4d45_5401L;

  private final MetricSnapshotRepository snapshots;
  private final TargetRepository targets;
  private final RunRepository runs;
  private final BatchRepository batches;
  private final LiveBatchRepository liveBatches;
  private final DriplineCounterRepository counters;
  private final BatchOutcomeCounterRepository outcomes;
  private final DataTransactions transactions;
  private final PoolRepository poolStore;

  public MetricsActivitiesImpl(
      MetricSnapshotRepository snapshots,
      TargetRepository targets,
      RunRepository runs,
      BatchRepository batches,
      LiveBatchRepository liveBatches,
      DriplineCounterRepository counters,
      BatchOutcomeCounterRepository outcomes,
      DataTransactions transactions,
      PoolRepository poolStore) {
    this.poolStore = poolStore;
    this.snapshots = snapshots;
    this.targets = targets;
    this.runs = runs;
    this.batches = batches;
    this.liveBatches = liveBatches;
    this.counters = counters;
    this.outcomes = outcomes;
    this.transactions = transactions;
  }

  /** One series of the snapshot. */
  record Series(String name, String labels, double value) {}

  @Override
  public int snapshot() {
    return transactions.inTransaction(
        connection -> {
          snapshots.lockForReplace(SNAPSHOT_LOCK);
          List<Series> series = compute();
          snapshots.deleteAll();
          for (Series s : series) {
            snapshots.insert(s.name(), s.labels(), s.value());
          }
          return series.size();
        });
  }

  /**
   * Every series of the snapshot, zeros included, as of the transaction's {@code now()} (call it in
   * a transaction).
   */
  List<Series> compute() {
    List<Series> series = new ArrayList<>();
    Map<String, Long> states = countBy(targets.countByState());
    for (String state : SnapshotSeries.TARGET_STATES) {
      series.add(
          new Series(
              SnapshotSeries.TARGETS,
              SnapshotSeries.label("state", state),
              states.getOrDefault(state, 0L)));
    }
    Map<String, Long> statuses = countBy(runs.countByStatus());
    for (String status : SnapshotSeries.RUN_STATUSES) {
      series.add(
          new Series(
              SnapshotSeries.RUNS,
              SnapshotSeries.label("status", status),
              statuses.getOrDefault(status, 0L)));
    }
    // Blocked = queued behind a target that is not primed; split by whether that target fails.
    BlockedBacklog blocked = liveBatches.blocked(FailureStreak.FAILING_THRESHOLD);
    series.add(new Series(SnapshotSeries.BLOCKED_BACKLOG, "", blocked.healthy()));
    series.add(
        new Series(
            SnapshotSeries.BLOCKED_OLDEST_AGE_SECONDS, "", Math.max(0, blocked.healthyAge())));
    series.add(new Series(SnapshotSeries.FAILING_BLOCKED_BACKLOG, "", blocked.failing()));
    // Stuck = failing, from the targets' state alone.
    StuckTargets stuck = targets.stuck(FailureStreak.FAILING_THRESHOLD);
    series.add(new Series(SnapshotSeries.STUCK_TARGETS, "", stuck.stuck()));
    series.add(new Series(SnapshotSeries.STUCK_OLDEST_AGE_SECONDS, "", Math.max(0, stuck.age())));
    series.add(
        new Series(
            SnapshotSeries.PLANNING_FAILURES_TOTAL,
            "",
            counters.value(SnapshotSeries.PLANNING_FAILURES_COUNTER).orElse(0L)));
    inflight(series);
    finished(series);
    throttled(series);
    pools(series);
    return series;
  }

  /** Slots in use and runs waiting, per pool (P5): a row per pool. */
  private void pools(List<Series> series) {
    for (PoolView pool : poolStore.list()) {
      String labels = SnapshotSeries.label("pool", pool.name());
      series.add(new Series(SnapshotSeries.POOL_IN_USE, labels, pool.inUse()));
      series.add(new Series(SnapshotSeries.POOL_WAITING, labels, pool.waiting()));
    }
  }

  /**
   * Slot holders per backfill: a row for every backfill of the catalogue, 0 when nothing is in
   * flight (a dashboard shows an idle backfill at 0, not "No data"), and for any other backfill
   * while it has an active run or a slot held (a definition no worker publishes any more, whose
   * runs still hold slots).
   */
  private void inflight(List<Series> series) {
    for (BackfillInflight row : batches.inflightPerBackfill()) {
      series.add(
          new Series(
              SnapshotSeries.BATCHES_INFLIGHT,
              SnapshotSeries.label("backfill", row.backfill()),
              row.inflight()));
    }
  }

  /**
   * Runs held now and time held, per backfill (P2): a row for every backfill of the catalogue, 0
   * when nothing holds its runs.
   */
  private void throttled(List<Series> series) {
    for (BackfillThrottle row : runs.throttlePerBackfill()) {
      String labels = SnapshotSeries.label("backfill", row.backfill());
      series.add(new Series(SnapshotSeries.RUNS_THROTTLED, labels, row.throttled()));
      series.add(
          new Series(SnapshotSeries.THROTTLED_SECONDS_TOTAL, labels, row.throttledSeconds()));
    }
  }

  /** Batch outcome counters: every outcome (zeros included) of each backfill that counted one. */
  private void finished(List<Series> series) {
    Map<String, Map<String, Long>> counts = new LinkedHashMap<>();
    for (OutcomeCount row : outcomes.totals()) {
      counts
          .computeIfAbsent(row.backfill(), b -> new LinkedHashMap<>())
          .put(row.outcome(), row.value());
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

  private static Map<String, Long> countBy(List<GroupCount> rows) {
    Map<String, Long> counts = new LinkedHashMap<>();
    for (GroupCount row : rows) {
      counts.put(row.value(), row.count());
    }
    return counts;
  }
}
