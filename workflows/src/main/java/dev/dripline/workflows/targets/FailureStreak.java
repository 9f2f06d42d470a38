package dev.dripline.workflows.targets;

/**
 * Whether a target is failing (spec T6): not primed, and either its streak has reached the failing
 * threshold or it needs a resync. A primed target is never failing, whatever its streak.
 */
public final class FailureStreak {
  /** Consecutive failures from which a target counts as failing. */
  public static final int FAILING_THRESHOLD = 3;

  private FailureStreak() {}

  public static boolean isFailing(TargetState state, int consecutiveFailures) {
    if (state == TargetState.PRIMED) {
      return false;
    }
    return state == TargetState.NEEDS_RESYNC || consecutiveFailures >= FAILING_THRESHOLD;
  }
}
