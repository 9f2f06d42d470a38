package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A run's planning state, as its planner reads it before asking the definition for keys.
 *
 * @param backfill the definition's name
 * @param options the run's options, JSON
 * @param status its status, as stored
 * @param stopRequested whether a stop of the run was recorded
 * @param batchSize keys per batch
 * @param maxRecords cap on keys for trial runs, or {@code null}
 * @param planCursor the last key planned, or {@code null} before the first page
 * @param planDone whether planning has reached the end of the run's scope
 * @param nextBatchNumber the number the next planned batch gets
 * @param plannedKeys keys planned so far
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param targetBatchMillis a tuned run's target batch duration (P4), else {@code null}
 * @param minBatchSize a tuned run's least batch size, else {@code null}
 * @param maxBatchSize a tuned run's largest batch size, else {@code null}
 * @param currentBatchSize the size a tuned run's last page was cut to (its starting size before the
 *     first), else {@code null}
 */
@Introspected
public record PlanCursor(
    String backfill,
    String options,
    String status,
    boolean stopRequested,
    int batchSize,
    @Nullable Long maxRecords,
    @Nullable Key planCursor,
    boolean planDone,
    int nextBatchNumber,
    long plannedKeys,
    @Nullable Long totalKeys,
    @Nullable Long targetBatchMillis,
    @Nullable Integer minBatchSize,
    @Nullable Integer maxBatchSize,
    @Nullable Integer currentBatchSize) {

  /** The run's batch-size tuning, or {@code null} if it is not tuned. */
  public BatchTuning tuning() {
    return BatchTuning.of(targetBatchMillis, minBatchSize, maxBatchSize);
  }
}
