package dev.dripline.target;

import java.time.Instant;

/**
 * The rules of a target's failure streak and backoff (PRODUCT T2–T8) as pure functions from one
 * record to the next. The PostgreSQL activities apply them to a locked row; tests apply them to an
 * in-memory one, so both follow exactly the same arithmetic.
 */
public final class TargetTransitions {
  private TargetTransitions() {}

  /**
   * A failed planning attempt (T3): streak + 1, firstFailedAt set once per streak, lastError kept,
   * back to pending_backfill with the backoff anchored on its own timestamp — or needs_resync when
   * the failure is permanent.
   */
  public static TargetSnapshot planningFailed(
      TargetSnapshot t, String error, boolean permanent, double jitterDraw, Instant now) {
    int failures = t.consecutiveFailures() + 1;
    Instant next = permanent ? null : now.plus(t.settings().backoff().delay(failures, jitterDraw));
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        permanent ? TargetState.NEEDS_RESYNC : TargetState.PENDING_BACKFILL,
        failures,
        t.firstFailedAt() != null ? t.firstFailedAt() : now,
        error,
        now,
        next,
        null,
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }

  /**
   * The target's run ended failed (T5): the streak rises to at least the failing threshold, once
   * (the caller applies this only on the backfilling → pending_backfill transition), and the target
   * waits out the backoff without holding a capacity slot.
   */
  public static TargetSnapshot runFailed(
      TargetSnapshot t, String error, double jitterDraw, Instant now) {
    int failures = Math.max(t.consecutiveFailures() + 1, FailureStreak.FAILING_THRESHOLD);
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        TargetState.PENDING_BACKFILL,
        failures,
        t.firstFailedAt() != null ? t.firstFailedAt() : now,
        error,
        t.lastAttemptAt(),
        now.plus(t.settings().backoff().delay(failures, jitterDraw)),
        null,
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }

  /** Forward progress — a plan saved, a batch completed (T4): the streak and its anchors reset. */
  public static TargetSnapshot progressed(TargetSnapshot t) {
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        t.state(),
        0,
        null,
        null,
        t.lastAttemptAt(),
        t.nextAttemptAt(),
        t.currentRunId(),
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }

  /**
   * A planning attempt succeeded (T4): the plan is saved as the target's current run, attempted
   * now, and the streak and its anchors reset.
   */
  public static TargetSnapshot planned(TargetSnapshot t, long runId, Instant now) {
    return progressed(
        new TargetSnapshot(
            t.name(),
            t.found(),
            t.backfill(),
            t.group(),
            t.state(),
            t.consecutiveFailures(),
            t.firstFailedAt(),
            t.lastError(),
            now,
            t.nextAttemptAt(),
            runId,
            t.queuedLiveBatches(),
            t.oldestQueuedAt(),
            t.settings()));
  }

  /** The run completed (T4, T5): primed, streak reset; live batches may now flow. */
  public static TargetSnapshot primed(TargetSnapshot t) {
    TargetSnapshot reset = progressed(t);
    return withState(reset, TargetState.PRIMED, reset.currentRunId());
  }

  /**
   * Capacity lost, or the run superseded by an operator (T2, T8): back to pending_backfill with
   * streak, firstFailedAt and nextAttemptAt untouched.
   */
  public static TargetSnapshot neutral(TargetSnapshot t) {
    return withState(t, TargetState.PENDING_BACKFILL, null);
  }

  /** Operator replan (T7): streak, anchors and error reset; pending_backfill, due at once. */
  public static TargetSnapshot replanned(TargetSnapshot t) {
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        TargetState.PENDING_BACKFILL,
        0,
        null,
        null,
        t.lastAttemptAt(),
        null,
        null,
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }

  /** A primed target's live batch failed permanently (T5): needs_resync, streak at least 3. */
  public static TargetSnapshot liveFailed(TargetSnapshot t, String error, Instant now) {
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        TargetState.NEEDS_RESYNC,
        Math.max(t.consecutiveFailures(), FailureStreak.FAILING_THRESHOLD),
        t.firstFailedAt() != null ? t.firstFailedAt() : now,
        error,
        t.lastAttemptAt(),
        t.nextAttemptAt(),
        t.currentRunId(),
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }

  /** Moves to backfilling on a won capacity race (T2); nothing else changes. */
  public static TargetSnapshot backfilling(TargetSnapshot t) {
    return withState(t, TargetState.BACKFILLING, t.currentRunId());
  }

  private static TargetSnapshot withState(TargetSnapshot t, TargetState state, Long runId) {
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        state,
        t.consecutiveFailures(),
        t.firstFailedAt(),
        t.lastError(),
        t.lastAttemptAt(),
        t.nextAttemptAt(),
        runId,
        t.queuedLiveBatches(),
        t.oldestQueuedAt(),
        t.settings());
  }
}
