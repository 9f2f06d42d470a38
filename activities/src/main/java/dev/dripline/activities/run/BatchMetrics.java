package dev.dripline.activities.run;

import dev.dripline.store.db.ShardedCounters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.inject.Singleton;
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

  private final MeterRegistry registry;
  private final Map<String, Timer> durations = new ConcurrentHashMap<>();

  public BatchMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** A batch's recorded outcome: its backfill, and seconds it held its slot (null if unknown). */
  record Outcome(String backfill, Double slotSeconds) {}

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
