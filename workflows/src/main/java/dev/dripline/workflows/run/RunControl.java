package dev.dripline.workflows.run;

import java.util.Optional;

/**
 * Which control request a run takes in which state (spec R7–R10): one rule for the API's answers (a
 * refusal is a 409 with this text), the workflow's signal handlers (a refused signal is logged and
 * ignored) and the test fakes. "Stopping" is a stop recorded but not yet finished.
 */
public final class RunControl {
  /** A control request an operator can make of a run. */
  public enum Request {
    STOP,
    RETRY,
    PAUSE,
    RESUME,
    CHANGE_CAP,
    DELETE
  }

  private RunControl() {}

  /** Why run {@code runId} refuses {@code request}, or empty if it takes it. */
  public static Optional<String> refusal(
      long runId, Request request, RunStatus status, boolean stopping) {
    String run = "run " + runId + " is ";
    String reason =
        switch (request) {
          case STOP -> status.isTerminal() ? run + "already " + status.wire() : null;
          case RETRY -> {
            if (status == RunStatus.COMPLETED) {
              yield run + "completed; there is nothing to retry";
            }
            yield stopping ? run + "stopping; retry it once it has stopped" : null;
          }
          case PAUSE -> {
            // A pending run is pausable from its creation (R9): it then waits past its start.
            if (status != RunStatus.RUNNING && status != RunStatus.PENDING) {
              yield run + status.wire() + "; only a pending or running run can be paused";
            }
            yield stopping ? run + "stopping; it cannot be paused" : null;
          }
          case RESUME ->
              status != RunStatus.PAUSED
                  ? run + status.wire() + "; only a paused run can be resumed"
                  : null;
          case CHANGE_CAP ->
              status.isTerminal() ? run + status.wire() + "; its cap can no longer change" : null;
          case DELETE ->
              status == RunStatus.RUNNING || status == RunStatus.PAUSED
                  ? run + status.wire() + "; stop it before deleting it"
                  : null;
        };
    return Optional.ofNullable(reason);
  }

  /**
   * Whether a retry of the run would do anything ({@link RetryRule}, R8): re-queue a failed batch —
   * or, for a stopped run, a stopped one — or re-open an ended run whose planning had not finished.
   * A pending run has no batches yet; a completed one is never retried.
   */
  public static boolean retryRequeues(
      RunStatus status, boolean planDone, long failedBatches, long stoppedBatches) {
    if (!RetryRule.applies(status, false)) {
      return false;
    }
    long requeued =
        failedBatches
            + (RetryRule.requeued(status).contains(BatchStatus.STOPPED) ? stoppedBatches : 0);
    return requeued > 0 || RetryRule.reopens(status, 0, planDone);
  }

  /** The refusal of a retry that would do nothing (see {@link #retryRequeues}). */
  public static String nothingToRequeue(long runId, RunStatus status) {
    return refusal(runId, Request.RETRY, status, false)
        .orElse("run " + runId + " is " + status.wire() + " and has nothing to re-queue");
  }
}
