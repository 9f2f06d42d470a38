package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A {@code runs} row as the API reads it ({@link RunRepository#RUN}): its stored columns with the
 * ones computed in the same statement, so a run's progress and its stop are read at one instant.
 *
 * @param id the run's id
 * @param backfill the definition's name
 * @param options its options as stored, JSON text
 * @param batchSize keys per batch
 * @param maxRecords cap on keys for trial runs, or {@code null}
 * @param requestedMaxParallelBatches the cap the run asked for, or {@code null}
 * @param maxParallelBatches the effective cap
 * @param startAt the scheduled start, or {@code null}
 * @param createdBy who created it
 * @param status its status, as stored
 * @param error why it failed, if it did
 * @param workflowId the Temporal workflow id behind it
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param processedKeys sum of completed batch sizes, from the run's sharded counters
 * @param createdAt when it was created
 * @param updatedAt when it last changed
 * @param startedAt when it started running
 * @param finishedAt when it ended
 * @param stopping whether the run is live and a stop of it is under way
 * @param planDone whether planning has reached the end of the run's scope
 * @param heldSince when the hold its claims last found began (the brake, a health check), null if
 *     none is open
 * @param throttledMillis time of its holds that ended
 * @param targetBatchMillis a tuned run's target batch duration (P4), else {@code null}
 * @param minBatchSize a tuned run's least batch size, else {@code null}
 * @param maxBatchSize a tuned run's largest batch size, else {@code null}
 * @param currentBatchSize the size a tuned run's batches are cut to now, else {@code null}
 * @param maxFailedBatchesPercent its failure budget (P6b), or {@code null} if it has none
 * @param failureBudgetMinBatches batches that must finish before the budget applies
 * @param failureBudgetSpentAt when the budget was spent, {@code null} unless it is spent now
 * @param failedBatchesPercent while the budget is spent, the share of the batches finished since it
 *     was renewed that failed; else {@code null}
 * @param pool the pool it draws from (P5), or {@code null}
 * @param niceRatio how much its lanes rest after each batch, times the batch's duration (0: not
 *     paced)
 */
@Introspected
public record RunView(
    long id,
    String backfill,
    String options,
    int batchSize,
    @Nullable Long maxRecords,
    @Nullable Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    @Nullable Instant startAt,
    @Nullable String createdBy,
    String status,
    @Nullable String error,
    @Nullable String workflowId,
    @Nullable Long totalKeys,
    long processedKeys,
    Instant createdAt,
    Instant updatedAt,
    @Nullable Instant startedAt,
    @Nullable Instant finishedAt,
    boolean stopping,
    boolean planDone,
    @Nullable Instant heldSince,
    long throttledMillis,
    @Nullable Long targetBatchMillis,
    @Nullable Integer minBatchSize,
    @Nullable Integer maxBatchSize,
    @Nullable Integer currentBatchSize,
    @Nullable Double maxFailedBatchesPercent,
    int failureBudgetMinBatches,
    @Nullable Instant failureBudgetSpentAt,
    @Nullable Double failedBatchesPercent,
    @Nullable String pool,
    double niceRatio) {}
