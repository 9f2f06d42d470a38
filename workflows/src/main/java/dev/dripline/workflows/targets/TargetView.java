package dev.dripline.workflows.targets;

import java.time.Instant;

/**
 * What the target workflow's {@code status} query returns.
 *
 * @param name the target
 * @param state its state
 * @param consecutiveFailures the failure streak
 * @param failing whether it counts as failing (T6)
 * @param firstFailedAt when the streak began
 * @param lastError the last failure's error
 * @param nextAttemptAt earliest next planning attempt
 * @param currentRunId its current run
 * @param blockedLiveBatches live batches waiting for the target to be primed
 * @param oldestBlockedAt arrival of the oldest of them
 */
public record TargetView(
    String name,
    TargetState state,
    int consecutiveFailures,
    boolean failing,
    Instant firstFailedAt,
    String lastError,
    Instant nextAttemptAt,
    Long currentRunId,
    long blockedLiveBatches,
    Instant oldestBlockedAt) {

  public static TargetView of(TargetSnapshot s) {
    boolean blocked = s.state() != TargetState.PRIMED;
    return new TargetView(
        s.name(),
        s.state(),
        s.consecutiveFailures(),
        s.failing(),
        s.firstFailedAt(),
        s.lastError(),
        s.nextAttemptAt(),
        s.currentRunId(),
        blocked ? s.queuedLiveBatches() : 0,
        blocked ? s.oldestQueuedAt() : null);
  }
}
