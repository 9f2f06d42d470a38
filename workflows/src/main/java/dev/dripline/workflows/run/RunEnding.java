package dev.dripline.workflows.run;

import java.util.Optional;

/**
 * When a run ends, and as what: the one rule that the run's record in PostgreSQL and the workflow
 * tests' fake store both apply, so that a fake cannot end a run production would keep going.
 *
 * @param status the terminal status
 * @param error the run's error text, or {@code null}
 */
public record RunEnding(RunStatus status, String error) {

  /**
   * What a run ends as now, or empty while it goes on.
   *
   * <p>Unplanned keys are work still to do: while planning has not reached the end of the scope,
   * only a stop or a run-level error ends the run. A batch that holds a slot or waits for one keeps
   * any run going — a stop too ends only once its in-flight batches have ended.
   *
   * @param stopping a stop was requested (its pending batches are already counted as stopped)
   * @param runError a run-level error, e.g. planning failed for good; {@code null} for none
   * @param planDone every key of the scope has been planned into batches
   * @param openBatches batches pending, enqueued or running
   * @param failedBatches batches that failed for good
   */
  public static Optional<RunEnding> of(
      boolean stopping, String runError, boolean planDone, long openBatches, long failedBatches) {
    if (openBatches > 0 || (!planDone && !stopping && runError == null)) {
      return Optional.empty();
    }
    if (stopping) {
      return Optional.of(new RunEnding(RunStatus.STOPPED, null));
    }
    if (runError != null) {
      return Optional.of(new RunEnding(RunStatus.FAILED, runError));
    }
    if (failedBatches > 0) {
      String error = failedBatches == 1 ? "1 batch failed" : failedBatches + " batches failed";
      return Optional.of(new RunEnding(RunStatus.FAILED, error));
    }
    return Optional.of(new RunEnding(RunStatus.COMPLETED, null));
  }
}
