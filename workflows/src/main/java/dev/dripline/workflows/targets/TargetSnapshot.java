package dev.dripline.workflows.targets;

import java.time.Instant;

/**
 * A target as recorded in PostgreSQL, with its backlog and the engine's target settings.
 *
 * @param name the target
 * @param found false if the target was deleted
 * @param backfill definition name
 * @param group capacity group, or {@code null}
 * @param state recorded state
 * @param consecutiveFailures the failure streak
 * @param firstFailedAt when the current streak began, or {@code null}
 * @param lastError the last failure's error, or {@code null}
 * @param lastAttemptAt when planning was last attempted, or {@code null}
 * @param nextAttemptAt earliest next planning attempt; the backoff's own anchor, or {@code null}
 * @param currentRunId the target's current backfill run, or {@code null}
 * @param queuedLiveBatches live batches not yet applied
 * @param oldestQueuedAt arrival of the oldest of them, or {@code null}
 * @param settings the engine's target settings
 * @param retryRunId the run whose failure the streak counts (T5): the target's next attempt retries
 *     that run's failed batches (R8) instead of planning a new run. Set while the streak counts run
 *     failures, cleared by forward progress and by a replan; {@code null} otherwise
 */
public record TargetSnapshot(
    String name,
    boolean found,
    String backfill,
    String group,
    TargetState state,
    int consecutiveFailures,
    Instant firstFailedAt,
    String lastError,
    Instant lastAttemptAt,
    Instant nextAttemptAt,
    Long currentRunId,
    long queuedLiveBatches,
    Instant oldestQueuedAt,
    TargetSettings settings,
    Long retryRunId) {

  /** A record with no failed run to retry. */
  public TargetSnapshot(
      String name,
      boolean found,
      String backfill,
      String group,
      TargetState state,
      int consecutiveFailures,
      Instant firstFailedAt,
      String lastError,
      Instant lastAttemptAt,
      Instant nextAttemptAt,
      Long currentRunId,
      long queuedLiveBatches,
      Instant oldestQueuedAt,
      TargetSettings settings) {
    this(
        name,
        found,
        backfill,
        group,
        state,
        consecutiveFailures,
        firstFailedAt,
        lastError,
        lastAttemptAt,
        nextAttemptAt,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        null);
  }

  public static TargetSnapshot notFound(String name) {
    return new TargetSnapshot(
        name, false, null, null, null, 0, null, null, null, null, null, 0, null, null, null);
  }

  /**
   * Whether the target's backoff is over at {@code now} (T3): no next attempt is recorded, or it is
   * not after {@code now}. A target that is not due takes no capacity and plans nothing.
   */
  public boolean dueAt(Instant now) {
    return nextAttemptAt == null || !nextAttemptAt.isAfter(now);
  }

  public boolean failing() {
    return found && FailureStreak.isFailing(state, consecutiveFailures);
  }
}
