package dev.dripline.store.targets;

import dev.dripline.workflows.targets.TargetSettings;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A {@code targets} row with its queue of live batches and the database's clock, read in one
 * statement ({@link TargetRepository}), so the worker's activities and the API see the same columns
 * and every process measures time by PostgreSQL's {@code now()}.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param options its options as stored, JSON text
 * @param groupName the capacity group, or {@code null}
 * @param state its state, as stored
 * @param consecutiveFailures the failure streak
 * @param firstFailedAt when the streak began
 * @param lastError the last failure's error
 * @param lastAttemptAt the last planning attempt
 * @param nextAttemptAt earliest next planning attempt
 * @param currentRunId its current run, or {@code null}
 * @param observedProcessedKeys processed keys of the current run when last observed
 * @param retryRunId the failed run to retry, or {@code null}
 * @param attemptId the planning attempt of its capacity slot, or {@code null}
 * @param createdAt when it was registered
 * @param updatedAt when it last changed
 * @param queuedLiveBatches its live batches still queued
 * @param oldestQueuedAt when the oldest of them was queued, or {@code null}
 * @param dbNow the statement's transaction clock ({@code now()})
 */
@Introspected
public record TargetWithQueue(
    String name,
    String backfill,
    String options,
    @Nullable String groupName,
    String state,
    int consecutiveFailures,
    @Nullable Instant firstFailedAt,
    @Nullable String lastError,
    @Nullable Instant lastAttemptAt,
    @Nullable Instant nextAttemptAt,
    @Nullable Long currentRunId,
    long observedProcessedKeys,
    @Nullable Long retryRunId,
    @Nullable Long attemptId,
    Instant createdAt,
    Instant updatedAt,
    long queuedLiveBatches,
    @Nullable Instant oldestQueuedAt,
    Instant dbNow) {

  /** The target as the workflow and its transitions see it. */
  public TargetSnapshot snapshot(TargetSettings settings) {
    return new TargetSnapshot(
        name,
        true,
        backfill,
        groupName,
        TargetState.fromWire(state),
        consecutiveFailures,
        firstFailedAt,
        lastError,
        lastAttemptAt,
        nextAttemptAt,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }
}
