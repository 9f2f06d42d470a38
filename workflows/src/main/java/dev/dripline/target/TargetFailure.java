package dev.dripline.target;

/** Types of the {@code ApplicationFailure}s raised for targets. */
public enum TargetFailure {
  TARGET_PLANNING_FAILED,
  TARGET_PLANNING_PERMANENT,
  LIVE_BATCH_FAILED
}
