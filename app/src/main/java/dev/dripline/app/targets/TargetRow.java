package dev.dripline.app.targets;

import dev.dripline.workflows.targets.TargetState;
import java.time.Instant;
import java.util.Map;

/**
 * A {@code targets} row with its queue of live batches, as read in one statement.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param options normalized options
 * @param group the capacity group, or {@code null}
 * @param state its lifecycle state
 * @param consecutiveFailures the failure streak
 * @param firstFailedAt when the streak began
 * @param lastAttemptAt the last planning attempt
 * @param nextAttemptAt earliest next planning attempt (the backoff's anchor)
 * @param lastError the last failure's error
 * @param currentRunId its current run, or {@code null}
 * @param createdAt when it was registered
 * @param updatedAt when it last changed
 * @param queuedLiveBatches live batches of the target still queued
 * @param oldestQueuedAgeSeconds age of the oldest of them by the database's clock, or {@code null}
 */
record TargetRow(
    String name,
    String backfill,
    Map<String, Object> options,
    String group,
    TargetState state,
    int consecutiveFailures,
    Instant firstFailedAt,
    Instant lastAttemptAt,
    Instant nextAttemptAt,
    String lastError,
    Long currentRunId,
    Instant createdAt,
    Instant updatedAt,
    long queuedLiveBatches,
    Long oldestQueuedAgeSeconds) {}
