package dev.dripline.workflows.targets;

import java.time.Instant;

/**
 * The rules of a target's failure streak and backoff (spec T2–T8) as pure functions from one record
 * to the next. The PostgreSQL activities apply them to a locked row; tests apply them to an
 * in-memory one, so both follow exactly the same arithmetic.
 *
 * <p>What counts as forward progress depends on the failure that started the streak (T4): after a
 * <em>planning</em> failure a saved plan resets it; after a <em>run</em> failure only a batch of
 * the retried run completing does, and the run to retry is kept in {@link
 * TargetSnapshot#retryRunId()} until then. A completed run always resets it.
 */
public final class TargetTransitions {
  private TargetTransitions() {}

  /**
   * A failed planning attempt (T3): streak + 1, firstFailedAt set once per streak, lastError kept,
   * back to pending_backfill with the backoff anchored on its own timestamp — or needs_resync when
   * the failure is permanent. A run waiting to be retried stays so.
   */
  public static TargetSnapshot planningFailed(
      TargetSnapshot t, String error, boolean permanent, double jitterDraw, Instant now) {
    int failures = t.consecutiveFailures() + 1;
    return t.withState(permanent ? TargetState.NEEDS_RESYNC : TargetState.PENDING_BACKFILL)
        .withConsecutiveFailures(failures)
        .withFirstFailedAt(streakStart(t, now))
        .withLastError(error)
        .withLastAttemptAt(now)
        .withNextAttemptAt(
            permanent ? null : now.plus(t.settings().backoff().delay(failures, jitterDraw)))
        .withCurrentRunId(null);
  }

  /**
   * The target's run ended failed (T5): the streak rises by one and to at least the failing
   * threshold — the caller applies this only on the backfilling → pending_backfill transition, so
   * once per failed run or failed retry — and the target waits out the backoff without holding a
   * capacity slot. The failed run is the one its next attempt retries.
   */
  public static TargetSnapshot runFailed(
      TargetSnapshot t, String error, double jitterDraw, Instant now) {
    int failures = Math.max(t.consecutiveFailures() + 1, FailureStreak.FAILING_THRESHOLD);
    return t.withState(TargetState.PENDING_BACKFILL)
        .withConsecutiveFailures(failures)
        .withFirstFailedAt(streakStart(t, now))
        .withLastError(error)
        .withNextAttemptAt(now.plus(t.settings().backoff().delay(failures, jitterDraw)))
        .withCurrentRunId(null)
        .withRetryRunId(t.currentRunId() != null ? t.currentRunId() : t.retryRunId());
  }

  /**
   * Forward progress — a batch of the current run completed (T4): the streak and its anchors reset,
   * and no failed run is left to retry.
   */
  public static TargetSnapshot progressed(TargetSnapshot t) {
    return t.withConsecutiveFailures(0)
        .withFirstFailedAt(null)
        .withLastError(null)
        .withRetryRunId(null);
  }

  /**
   * A planning attempt saved a new run (T4): the run becomes current, attempted now. After planning
   * failures that is forward progress and the streak resets. After a run failure (a run to retry is
   * recorded, but it could not be retried, e.g. it was deleted) a saved plan proves nothing: the
   * streak stays, and the new run is the one to retry should it fail too.
   */
  public static TargetSnapshot planned(TargetSnapshot t, long runId, Instant now) {
    TargetSnapshot saved =
        t.withLastAttemptAt(now)
            .withCurrentRunId(runId)
            .withRetryRunId(t.retryRunId() == null ? null : runId);
    return t.retryRunId() == null ? progressed(saved) : saved;
  }

  /**
   * A planning attempt after a run failure retries that run (T5, R8): its failed batches go back to
   * pending and it becomes current again, attempted now. The streak is untouched — only a batch of
   * the retried run completing resets it.
   */
  public static TargetSnapshot retried(TargetSnapshot t, long runId, Instant now) {
    return t.withLastAttemptAt(now).withCurrentRunId(runId).withRetryRunId(runId);
  }

  /** The run completed (T4, T5): primed, streak reset; live batches may now flow. */
  public static TargetSnapshot primed(TargetSnapshot t) {
    return progressed(t).withState(TargetState.PRIMED);
  }

  /**
   * Capacity lost, or the run superseded by an operator (T2, T8): back to pending_backfill with
   * streak, firstFailedAt, nextAttemptAt and the run to retry untouched.
   */
  public static TargetSnapshot neutral(TargetSnapshot t) {
    return t.withState(TargetState.PENDING_BACKFILL).withCurrentRunId(null);
  }

  /**
   * Operator replan (T7): streak, anchors, error and the run to retry reset; pending_backfill, due
   * at once.
   */
  public static TargetSnapshot replanned(TargetSnapshot t) {
    return progressed(t)
        .withState(TargetState.PENDING_BACKFILL)
        .withNextAttemptAt(null)
        .withCurrentRunId(null);
  }

  /** A primed target's live batch failed permanently (T5): needs_resync, streak at least 3. */
  public static TargetSnapshot liveFailed(TargetSnapshot t, String error, Instant now) {
    return t.withState(TargetState.NEEDS_RESYNC)
        .withConsecutiveFailures(Math.max(t.consecutiveFailures(), FailureStreak.FAILING_THRESHOLD))
        .withFirstFailedAt(streakStart(t, now))
        .withLastError(error);
  }

  /** Moves to backfilling on a won capacity race (T2); nothing else changes. */
  public static TargetSnapshot backfilling(TargetSnapshot t) {
    return t.withState(TargetState.BACKFILLING);
  }

  /** When the streak began: kept if it had, else {@code now} (once per streak, T3). */
  private static Instant streakStart(TargetSnapshot t, Instant now) {
    return t.firstFailedAt() != null ? t.firstFailedAt() : now;
  }
}
