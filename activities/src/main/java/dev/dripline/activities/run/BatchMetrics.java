package dev.dripline.activities.run;

import dev.dripline.store.db.ShardedCounters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The run metrics recorded where a batch's outcome is recorded (spec §5).
 *
 * <ul>
 *   <li>{@code dripline_batches_finished_total{backfill,outcome}} is kept in PostgreSQL (table
 *       {@code batch_outcome_counters}, sharded: see {@link ShardedCounters}) and incremented
 *       inside the transaction whose compare-and-set records the outcome, so it is counted exactly
 *       once and every process exports the same total (through the metrics snapshot).
 *   <li>{@code dripline_batch_duration_seconds{backfill}} is this process's histogram of the time a
 *       batch held its slot, recorded after that transaction committed; sum it across processes
 *       ({@code sum by (backfill, le) (rate(..._bucket[5m]))}).
 * </ul>
 */
@Singleton
public class BatchMetrics {
  /** Prometheus shows it as {@code dripline_batch_duration_seconds} (Timers are in seconds). */
  static final String DURATION = "dripline.batch.duration";

  /** Histogram buckets: from quick batches to the default batch timeout of an hour. */
  static final Duration[] DURATION_BUCKETS = {
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofMinutes(1),
    Duration.ofMinutes(2),
    Duration.ofMinutes(5),
    Duration.ofMinutes(10),
    Duration.ofMinutes(30),
    Duration.ofHours(1),
  };

  /**
   * SQL, for the {@code returning} clause of an outcome's update of {@code batches b}: seconds the
   * batch held its slot, from the claim that enqueued it (or, for a batch enqueued before that was
   * recorded, its first attempt); null if neither is known.
   */
  static final String SLOT_SECONDS =
      "extract(epoch from now() - coalesce(b.enqueued_at, b.started_at))::float8";

  private final MeterRegistry registry;
  private final Map<String, Timer> durations = new ConcurrentHashMap<>();

  public BatchMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** A batch's recorded outcome: its backfill, and seconds it held its slot (null if unknown). */
  record Outcome(String backfill, Double slotSeconds) {
    /** Reads {@code backfill} and {@code slot_seconds} from a {@code returning} row. */
    static Outcome of(ResultSet rs) throws SQLException {
      String backfill = rs.getString("backfill");
      double seconds = rs.getDouble("slot_seconds");
      return new Outcome(backfill, rs.wasNull() ? null : Math.max(0, seconds));
    }
  }

  /**
   * Adds {@code count} batches of {@code backfill} to the outcome's counter, in the shard of batch
   * {@code number}, inside the caller's transaction. Call it once the transaction holds every other
   * lock it needs: counter rows are shared by all runs of a backfill, so they are held briefly and
   * never while waiting for another lock (no lock-order cycle).
   */
  static void countFinished(
      Connection connection, String backfill, String outcome, int number, long count)
      throws SQLException {
    ShardedCounters.addOutcomes(
        connection, backfill, outcome, ShardedCounters.shardOf(number), count);
  }

  /** Records the time a batch held its slot; call after the outcome's transaction committed. */
  void recordSlotTime(Outcome outcome) {
    if (outcome == null || outcome.slotSeconds() == null) {
      return;
    }
    durations
        .computeIfAbsent(
            outcome.backfill(),
            backfill ->
                Timer.builder(DURATION)
                    .description("Time a batch held its slot, from enqueued to its outcome")
                    .tag("backfill", backfill)
                    .serviceLevelObjectives(DURATION_BUCKETS)
                    .register(registry))
        .record(Duration.ofNanos(Math.round(outcome.slotSeconds() * 1e9)));
  }
}
