package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * A pending run's start: at its {@code startAt} (R2), unless a stop comes first, which ends the run
 * before it started. A retry meanwhile is answered at once: a pending run has no batches yet.
 */
final class RunStart {
  private static final Logger log = Workflow.getLogger(RunStart.class);

  private final RunLedger run;
  private final RunRequests requests;
  private final EndedRunWait ended;

  RunStart(RunLedger run, RunRequests requests, EndedRunWait ended) {
    this.run = run;
    this.requests = requests;
    this.ended = ended;
  }

  /**
   * Starts a pending run at its start time, or ends it if a stop came first.
   *
   * @return null if the run goes on into the loop, else the workflow's outcome
   */
  RunOutcome await() {
    run.publishStatus();
    if (!awaitStartTime()) {
      // Stopped before it started.
      FinishResult finish = run.runs.finish(new FinishRequest(run.runId, true, null));
      run.ended(finish);
      if (finish.status() == null) {
        run.status = RunStatus.STOPPED;
      }
      run.publishStatus();
      boolean reopened =
          finish.status() != null && ended.waitsForRetry(run.status) && ended.await();
      return reopened ? null : new RunOutcome(run.status, run.processedKeys);
    }
    StartResult start = run.runs.markRunning(run.ref());
    if (start.started()) {
      run.startedAt = start.startedAt();
      run.status = RunStatus.RUNNING;
      return null;
    }
    log.info("run {} did not start: it is {}", run.runId, start.status());
    if (start.status() == null || !ended.waitsForRetry(start.status())) {
      return new RunOutcome(start.status(), run.processedKeys);
    }
    run.status = start.status();
    run.publishStatus();
    return ended.await() ? null : new RunOutcome(run.status, run.processedKeys);
  }

  /** Waits until {@code startAt}; false if a stop came first. */
  private boolean awaitStartTime() {
    while (run.settings.startAt() != null && !requests.stopRequested) {
      long waitMillis = run.settings.startAt().toEpochMilli() - Workflow.currentTimeMillis();
      if (waitMillis <= 0) {
        break;
      }
      Workflow.await(
          Duration.ofMillis(waitMillis),
          () -> requests.stopRequested || requests.retryAnswersOwed());
      if (!requests.retryAnswersOwed()) {
        break;
      }
      // A pending run has no batches yet.
      requests.retryRequested = false;
      requests.answerRetries(
          RetryAnswer.refused(RunControl.nothingToRequeue(run.runId, RunStatus.PENDING)));
    }
    return !requests.stopRequested;
  }
}
