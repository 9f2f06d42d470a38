package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.run.RunView;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * A run's failure budget (P6b), in {@code GET /api/runs/{id}}: once more of its finished batches
 * than {@code maxFailedBatchesPercent} have failed, and at least {@code minBatches} have finished,
 * the budget is spent and the run pauses itself until resumed or retried.
 *
 * @param maxFailedBatchesPercent the share of finished batches that may fail, 0 to 100
 * @param minBatches batches that must finish (since the budget was last renewed) before it applies
 * @param spentAt when it was spent; {@code null} unless it is spent now
 * @param failedPercent while spent, the share of the batches finished since its renewal that
 *     failed; else {@code null}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record FailureBudgetResponse(
    double maxFailedBatchesPercent,
    int minBatches,
    @Nullable Instant spentAt,
    @Nullable Double failedPercent) {

  /** Reason name of a spent budget in a run's {@code throttle.reasons}. */
  static final String REASON = "failure-budget";

  /** The budget of run {@code r}, {@code null} if it has none. */
  static @Nullable FailureBudgetResponse of(RunView r) {
    return r.maxFailedBatchesPercent() == null
        ? null
        : new FailureBudgetResponse(
            r.maxFailedBatchesPercent(),
            r.failureBudgetMinBatches(),
            r.failureBudgetSpentAt(),
            r.failedBatchesPercent());
  }

  /** Whether the budget is spent: the run may start no new batch until resumed or retried. */
  boolean spent() {
    return spentAt != null;
  }

  /** The spent budget as a hold of the run, in its {@code throttle.reasons}. */
  RunThrottleResponse.Reason reason() {
    return new RunThrottleResponse.Reason(REASON, failedPercent, maxFailedBatchesPercent);
  }
}
