package dev.dripline.workflows.targets;

/** Types of the {@code ApplicationFailure}s raised for targets. */
public enum TargetFailure {
  /** A planning attempt failed; it counts in the streak and is retried after the backoff. */
  TARGET_PLANNING_FAILED,
  /** The definition can never plan this target: needs_resync. */
  TARGET_PLANNING_PERMANENT,
  /** The target is no longer backfilling (an operator replanned it): streak-neutral, reload. */
  TARGET_SUPERSEDED,
  /** The target's previous run is still stopping: streak-neutral, plan again shortly. */
  PREVIOUS_RUN_ACTIVE,
  /** A live batch failed; the engine may retry it. */
  LIVE_BATCH_FAILED
}
