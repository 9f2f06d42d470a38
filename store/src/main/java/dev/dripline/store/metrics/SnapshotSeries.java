package dev.dripline.store.metrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The series of table {@code metric_snapshots} (spec §5): names as Prometheus shows them, labels as
 * a canonical {@code key=value[,key=value]} string ({@code ""} for none). The metrics activity
 * writes exactly these series and {@link SnapshotGauges} exports exactly these, as they are in the
 * last snapshot it read. Every snapshot holds every series with fixed labels (zeros included);
 * series labelled by backfill ({@link #LABELLED_BY_BACKFILL}) exist exactly as long as their rows
 * do.
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

  /**
   * Batches holding a slot ({@code enqueued} or {@code running}) per backfill. One row per backfill
   * of the catalogue (table {@code backfill_definitions}), 0 when it holds none, so a dashboard
   * shows an idle backfill at 0 rather than "No data"; and one per backfill outside the catalogue
   * while it has an active run (pending, running, paused) or a slot held.
   */
  public static final String BATCHES_INFLIGHT = "dripline_batches_inflight";

  /**
   * Batch outcomes per backfill and outcome, from table {@code batch_outcome_counters}: all three
   * outcomes of every backfill that has counted one.
   */
  public static final String BATCHES_FINISHED_TOTAL = "dripline_batches_finished_total";

  /**
   * Running runs per backfill that the brake or a health check holds now (P2): no new batch of them
   * starts. One row per backfill of the catalogue, 0 when none is held.
   */
  public static final String RUNS_THROTTLED = "dripline_runs_throttled";

  /**
   * Seconds the runs of a backfill have been held (P2), ended holds and open ones: time that is not
   * processing time. Kept on the runs' rows, so deleting a run takes its time out (a counter reset
   * to Prometheus).
   */
  public static final String THROTTLED_SECONDS_TOTAL = "dripline_throttled_seconds_total";

  /** Batches holding a slot of each pool now (P5): a row per pool. */
  public static final String POOL_IN_USE = "dripline_pool_in_use";

  /**
   * Runs waiting in line for a slot of each pool now (P5; running, not stopping, not held, with a
   * pending batch): a row per pool.
   */
  public static final String POOL_WAITING = "dripline_pool_waiting";

  /**
   * How old the snapshot a process serves is (now − its {@code computed_at}, on PostgreSQL's
   * clock). Not a row of the table: each process computes it from the snapshot it read ({@link
   * SnapshotGauges#snapshotAgeSeconds}).
   */
  public static final String METRICS_SNAPSHOT_AGE_SECONDS = "dripline_metrics_snapshot_age_seconds";

  /** The series whose labels come from the rows (a backfill's name), not from fixed lists. */
  public static final List<String> LABELLED_BY_BACKFILL =
      List.of(BATCHES_INFLIGHT, BATCHES_FINISHED_TOTAL, RUNS_THROTTLED, THROTTLED_SECONDS_TOTAL);

  /** The series labelled by pool: one per pool of table {@code pools}. */
  public static final List<String> LABELLED_BY_POOL = List.of(POOL_IN_USE, POOL_WAITING);

  /** Every run status, in lifecycle order; each gets a series even at zero. */
  public static final List<String> RUN_STATUSES =
      List.of("pending", "running", "paused", "completed", "failed", "stopped");

  /** Every target state; each gets a series even at zero. */
  public static final List<String> TARGET_STATES =
      List.of("pending_backfill", "backfilling", "primed", "needs_resync");

  /** Every batch outcome of {@code dripline_batches_finished_total}. */
  public static final List<String> BATCH_OUTCOMES = List.of("completed", "failed", "stopped");

  /** Name of the row of table {@code dripline_counters} counting failed planning attempts. */
  public static final String PLANNING_FAILURES_COUNTER = "planning_failures_total";

  private SnapshotSeries() {}

  /** The canonical labels text of one label, e.g. {@code state=primed}. */
  public static String label(String key, String value) {
    return key + "=" + escape(value);
  }

  /**
   * The canonical labels text of several labels, in the order given, e.g. {@code
   * backfill=example.sleep,outcome=completed}. Values escape {@code \} and {@code ,} with a
   * backslash, since a backfill's name is free text.
   */
  public static String labels(String... keysAndValues) {
    if (keysAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("labels take key, value pairs");
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      if (i > 0) {
        text.append(',');
      }
      text.append(label(keysAndValues[i], keysAndValues[i + 1]));
    }
    return text.toString();
  }

  /** The labels of a canonical labels text, in order; the inverse of {@link #labels}. */
  public static Map<String, String> parseLabels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    StringBuilder part = new StringBuilder();
    boolean escaped = false;
    for (int i = 0; i <= text.length(); i++) {
      char c = i < text.length() ? text.charAt(i) : ',';
      if (escaped) {
        part.append(c);
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == ',') {
        if (!part.isEmpty()) {
          int equals = part.indexOf("=");
          if (equals < 1) {
            throw new IllegalArgumentException("not a labels text: " + text);
          }
          labels.put(part.substring(0, equals), part.substring(equals + 1));
        }
        part.setLength(0);
      } else {
        part.append(c);
      }
    }
    return labels;
  }

  private static String escape(String value) {
    return value.replace("\\", "\\\\").replace(",", "\\,");
  }
}
