package dev.dripline.app.run;

import dev.dripline.store.run.BatchTuning;
import dev.dripline.store.run.RunRepository;
import java.time.Instant;

/**
 * A validated run, ready to be inserted as {@code pending}.
 *
 * @param backfill the definition's name
 * @param optionsJson normalized options as canonical JSON (also the duplicate key of R3)
 * @param batchSize keys per batch
 * @param maxRecords cap on keys, or {@code null}
 * @param requestedMaxParallelBatches the cap the request asked for, or {@code null}
 * @param maxParallelBatches the effective cap
 * @param startAt scheduled start, or {@code null}
 * @param createdBy who asked
 * @param idempotencyKey the request's {@code Idempotency-Key}, or {@code null}
 * @param tuning its batch-size tuning (P4), or {@code null} if it is not tuned
 * @param maxFailedBatchesPercent the run's failure budget, or {@code null} for its definition's
 * @param failureBudgetMinBatches batches that must finish before the budget applies
 * @param pool the pool it draws from (P5), or {@code null}
 * @param niceRatio how much its lanes rest after each batch, times the batch's duration; {@code
 *     null} for its definition's
 */
record NewRun(
    String backfill,
    String optionsJson,
    int batchSize,
    Long maxRecords,
    Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    Instant startAt,
    String createdBy,
    String idempotencyKey,
    BatchTuning tuning,
    Double maxFailedBatchesPercent,
    int failureBudgetMinBatches,
    String pool,
    Double niceRatio) {

  /** Batches that must finish before a failure budget applies, unless the run says otherwise. */
  static final int DEFAULT_FAILURE_BUDGET_MIN_BATCHES =
      RunRepository.DEFAULT_FAILURE_BUDGET_MIN_BATCHES;

  /** The size the run's first batches are cut to: its batch size, within a tuned run's bounds. */
  int startingBatchSize() {
    return tuning == null ? batchSize : tuning.startingSize(batchSize);
  }
}
