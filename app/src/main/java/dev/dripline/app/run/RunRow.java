package dev.dripline.app.run;

import dev.dripline.workflows.run.RunStatus;
import java.time.Instant;
import java.util.Map;

/**
 * A row of {@code runs} as the API reads it (not the API's representation: see {@link
 * RunResponse}).
 *
 * @param id the run's id
 * @param backfill the definition's name
 * @param options normalized option values, sorted by name
 * @param batchSize keys per batch
 * @param maxRecords cap on keys for trial runs, or {@code null}
 * @param requestedMaxParallelBatches the cap the run asked for, or {@code null}
 * @param maxParallelBatches the effective cap
 * @param startAt the scheduled start, or {@code null}
 * @param createdBy who created it
 * @param status its status
 * @param error why it failed, if it did
 * @param workflowId the Temporal workflow id behind it
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param processedKeys sum of completed batch sizes
 * @param createdAt when it was created
 * @param updatedAt when it last changed
 * @param startedAt when it started running
 * @param finishedAt when it ended
 * @param stopping whether the run is live and a stop of it is under way (a stopped run's record
 *     keeps the stop until a retry, but is no longer stopping)
 * @param planDone whether planning has reached the end of the run's scope
 * @param heldSince when the run's current hold began, as its claims booked it; {@code null} if none
 * @param throttledMillis time of its holds that ended (not processing time, P2)
 * @param targetBatchMillis a tuned run's target batch duration (P4), else {@code null}
 * @param minBatchSize a tuned run's least batch size, else {@code null}
 * @param maxBatchSize a tuned run's largest batch size, else {@code null}
 * @param currentBatchSize the size a tuned run's batches are cut to now, else {@code null}
 * @param failureBudget its failure budget (P6b), {@code null} if it has none
 * @param pool the pool it draws from (P5), or {@code null}
 * @param niceRatio how much its lanes rest after each batch, times the batch's duration (0: not
 *     paced)
 */
record RunRow(
    long id,
    String backfill,
    Map<String, Object> options,
    int batchSize,
    Long maxRecords,
    Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    Instant startAt,
    String createdBy,
    RunStatus status,
    String error,
    String workflowId,
    Long totalKeys,
    long processedKeys,
    Instant createdAt,
    Instant updatedAt,
    Instant startedAt,
    Instant finishedAt,
    boolean stopping,
    boolean planDone,
    Instant heldSince,
    long throttledMillis,
    Long targetBatchMillis,
    Integer minBatchSize,
    Integer maxBatchSize,
    Integer currentBatchSize,
    FailureBudgetResponse failureBudget,
    String pool,
    double niceRatio) {}
