package dev.dripline.workflows.run;

import java.util.List;

/**
 * What a retry of a run does (spec R8), as one rule for the re-queue in PostgreSQL ({@code
 * BatchRequeue}), the workflow tests' fake store and the API's pre-check ({@link
 * RunControl#retryRequeues}) alike: failed batches — and, for a stopped run, stopped batches — go
 * back to pending, and an ended run with anything to do again is re-opened. A pending or completed
 * run is never touched, nor a live run being stopped: the stop's finish would stop what the retry
 * re-queued.
 */
public final class RetryRule {
  private RetryRule() {}

  /** Whether a retry touches a run in {@code status} at all. */
  public static boolean applies(RunStatus status, boolean stopRequested) {
    if (status == RunStatus.PENDING || status == RunStatus.COMPLETED) {
      return false;
    }
    return !(stopRequested && status.isActive());
  }

  /** The batch statuses a retry of a run in {@code status} moves back to pending. */
  public static List<BatchStatus> requeued(RunStatus status) {
    return status == RunStatus.STOPPED
        ? List.of(BatchStatus.FAILED, BatchStatus.STOPPED)
        : List.of(BatchStatus.FAILED);
  }

  /**
   * Whether the retry re-opens the run: it had ended (failed or stopped) and has batches to run
   * again, or keys its planning never reached.
   */
  public static boolean reopens(RunStatus status, int requeued, boolean planDone) {
    boolean ended = status == RunStatus.FAILED || status == RunStatus.STOPPED;
    return ended && (requeued > 0 || !planDone);
  }
}
