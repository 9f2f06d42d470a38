package dev.dripline.workflows.run;

/** What happened to a batch handed to {@link BatchActivities#processBatch}. */
public enum BatchOutcome {
  /** Processed now. */
  COMPLETED,
  /** A previous attempt had completed it; nothing ran again. */
  ALREADY_COMPLETED,
  /** The batch no longer held a slot (run stopped or deleted); nothing ran. */
  SKIPPED
}
