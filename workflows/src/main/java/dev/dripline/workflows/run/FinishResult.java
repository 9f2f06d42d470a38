package dev.dripline.workflows.run;

import java.time.Instant;

/**
 * @param finished false if a batch was still pending or holding a slot, so the run goes on
 * @param status the terminal status when finished
 * @param finishedAt when it finished
 * @param processedKeys the run's processed keys as PostgreSQL counts them (exact) when finished;
 *     null when not finished, or from a worker older than this field
 */
public record FinishResult(
    boolean finished, RunStatus status, Instant finishedAt, Long processedKeys) {

  /** Without the processed keys. */
  public FinishResult(boolean finished, RunStatus status, Instant finishedAt) {
    this(finished, status, finishedAt, null);
  }
}
