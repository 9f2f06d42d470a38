package dev.dripline.metrics;

import java.util.List;

/**
 * The series of table {@code metric_snapshots} (PRODUCT §5): names as Prometheus shows them, labels
 * as a canonical {@code key=value} string ({@code ""} for none). The metrics activity writes
 * exactly these series and {@link SnapshotGauges} exports exactly these, so a missing row reads as
 * zero rather than as a missing series.
 */
public final class SnapshotSeries {
  public static final String RUNS = "dripline_runs";
  public static final String TARGETS = "dripline_targets";
  public static final String BLOCKED_BACKLOG = "dripline_blocked_backlog";
  public static final String BLOCKED_OLDEST_AGE_SECONDS = "dripline_blocked_oldest_age_seconds";
  public static final String FAILING_BLOCKED_BACKLOG = "dripline_failing_blocked_backlog";
  public static final String STUCK_TARGETS = "dripline_stuck_targets";
  public static final String STUCK_OLDEST_AGE_SECONDS = "dripline_stuck_oldest_age_seconds";
  public static final String PLANNING_FAILURES_TOTAL = "dripline_planning_failures_total";

  /** Every run status, in lifecycle order; each gets a series even at zero. */
  public static final List<String> RUN_STATUSES =
      List.of("pending", "running", "paused", "completed", "failed", "stopped");

  /** Every target state; each gets a series even at zero. */
  public static final List<String> TARGET_STATES =
      List.of("pending_backfill", "backfilling", "primed", "needs_resync");

  /** Name of the row of table {@code dripline_counters} counting failed planning attempts. */
  public static final String PLANNING_FAILURES_COUNTER = "planning_failures_total";

  private SnapshotSeries() {}

  /** The canonical labels text of one label, e.g. {@code state=primed}. */
  public static String label(String key, String value) {
    return key + "=" + value;
  }
}
