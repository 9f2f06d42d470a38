package dev.dripline.workflows.targets;

import java.time.Instant;

/**
 * A target as recorded in PostgreSQL, with its backlog and the engine's target settings. The fields
 * a transition changes have withers returning a copy ({@link #withState} and its siblings), so each
 * of {@link TargetTransitions} states only what it changes.
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

  /** A copy with the state set to {@code value}. */
  public TargetSnapshot withState(TargetState value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        value,
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

  /** A copy with the failure streak set to {@code value}. */
  public TargetSnapshot withConsecutiveFailures(int value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        state,
        value,
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

  /** A copy with the streak's start set to {@code value}. */
  public TargetSnapshot withFirstFailedAt(Instant value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        state,
        consecutiveFailures,
        value,
        lastError,
        lastAttemptAt,
        nextAttemptAt,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }

  /** A copy with the last error set to {@code value}. */
  public TargetSnapshot withLastError(String value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        state,
        consecutiveFailures,
        firstFailedAt,
        value,
        lastAttemptAt,
        nextAttemptAt,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }

  /** A copy with the last planning attempt set to {@code value}. */
  public TargetSnapshot withLastAttemptAt(Instant value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        state,
        consecutiveFailures,
        firstFailedAt,
        lastError,
        value,
        nextAttemptAt,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }

  /** A copy with the next planning attempt set to {@code value}. */
  public TargetSnapshot withNextAttemptAt(Instant value) {
    return new TargetSnapshot(
        name,
        found,
        backfill,
        group,
        state,
        consecutiveFailures,
        firstFailedAt,
        lastError,
        lastAttemptAt,
        value,
        currentRunId,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }

  /** A copy with the current run set to {@code value}. */
  public TargetSnapshot withCurrentRunId(Long value) {
    return new TargetSnapshot(
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
        value,
        queuedLiveBatches,
        oldestQueuedAt,
        settings,
        retryRunId);
  }

  /** A copy with the run to retry set to {@code value}. */
  public TargetSnapshot withRetryRunId(Long value) {
    return new TargetSnapshot(
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
        value);
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
