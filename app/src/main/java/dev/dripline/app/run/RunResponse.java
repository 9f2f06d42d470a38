package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.RunProgress;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run as the API shows it ({@code GET /api/runs/{id}} and list items).
 *
 * @param id the run's id
 * @param backfill the definition's name
 * @param options normalized option values
 * @param batchSize keys per batch
 * @param maxRecords cap on keys, or {@code null}
 * @param maxParallelBatches the effective cap (spec R5)
 * @param requestedMaxParallelBatches the cap the run asked for, or {@code null}
 * @param startAt scheduled start, or {@code null}
 * @param createdBy who created it
 * @param createdAt when it was created
 * @param updatedAt when it last changed
 * @param startedAt when it started running
 * @param finishedAt when it ended
 * @param status pending, running, paused, completed, failed or stopped
 * @param error why it failed, if it did
 * @param workflowId the Temporal workflow id, {@code dripline-run-<id>}
 * @param batchCounts batches per status, every status present
 * @param inFlight batches holding a slot (enqueued or running)
 * @param progress progress figures (spec R11)
 * @param throttle what holds a running run now (P2, P3); {@code null} unless it is running
 * @param targetBatchDuration a tuned run's target batch duration (P4), ISO-8601; {@code null} if
 *     the run is not tuned
 * @param minBatchSize a tuned run's least batch size, else {@code null}
 * @param maxBatchSize a tuned run's largest batch size, else {@code null}
 * @param currentBatchSize the size the run's batches are cut to now: a tuned run's last planned
 *     size (its starting size before it planned), else {@code batchSize}
 * @param throttle what holds a running run now (P2, P3, P6b); {@code null} unless it is running, or
 *     paused by its failure budget
 * @param failureBudget its failure budget (P6b), {@code null} if it has none
 * @param pool the pool the run draws from (P5), {@code null} for none
 * @param niceRatio how much the run's lanes rest after each batch, times the batch's duration (0:
 *     not paced)
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record RunResponse(
    long id,
    String backfill,
    Map<String, Object> options,
    int batchSize,
    Long maxRecords,
    int maxParallelBatches,
    Integer requestedMaxParallelBatches,
    Instant startAt,
    String createdBy,
    Instant createdAt,
    Instant updatedAt,
    Instant startedAt,
    Instant finishedAt,
    String status,
    String error,
    String workflowId,
    Map<String, Long> batchCounts,
    long inFlight,
    ProgressResponse progress,
    @Nullable RunThrottleResponse throttle,
    @Nullable String targetBatchDuration,
    @Nullable Integer minBatchSize,
    @Nullable Integer maxBatchSize,
    int currentBatchSize,
    @Nullable FailureBudgetResponse failureBudget,
    @Nullable String pool,
    double niceRatio) {

  /**
   * @param throttle what holds the run, if it is running or paused by its failure budget; else
   *     {@code null}
   */
  static RunResponse of(
      RunRow run,
      Map<BatchStatus, Long> counts,
      Instant now,
      @Nullable RunThrottleResponse throttle) {
    Map<String, Long> byStatus = new LinkedHashMap<>();
    long inFlight = 0;
    for (BatchStatus status : BatchStatus.values()) {
      long count = counts.getOrDefault(status, 0L);
      byStatus.put(status.wire(), count);
      if (status.holdsSlot()) {
        inFlight += count;
      }
    }
    RunProgress progress =
        RunProgress.of(
            run.status(),
            run.totalKeys(),
            run.processedKeys(),
            run.startedAt(),
            run.finishedAt(),
            now,
            run.throttledMillis(),
            run.heldSince());
    return new RunResponse(
        run.id(),
        run.backfill(),
        run.options(),
        run.batchSize(),
        run.maxRecords(),
        run.maxParallelBatches(),
        run.requestedMaxParallelBatches(),
        run.startAt(),
        run.createdBy(),
        run.createdAt(),
        run.updatedAt(),
        run.startedAt(),
        run.finishedAt(),
        run.status().wire(),
        run.error(),
        run.workflowId(),
        byStatus,
        inFlight,
        ProgressResponse.of(progress),
        throttle,
        run.targetBatchMillis() == null
            ? null
            : Duration.ofMillis(run.targetBatchMillis()).toString(),
        run.minBatchSize(),
        run.maxBatchSize(),
        run.currentBatchSize() == null ? run.batchSize() : run.currentBatchSize(),
        run.failureBudget(),
        run.pool(),
        run.niceRatio());
  }
}
