package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_WHILE_PENDING;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * A pending run's start: at its {@code startAt} (R2), unless a stop comes first, which ends the run
 * before it started, or it is paused, when it waits past its start until resumed (R9). A retry
 * meanwhile is answered at once: a pending run has no batches yet.
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

  /**
   * Waits until {@code startAt}, and while paused (R9: a pending run is paused from its creation
   * and then waits past its start time until resumed); false if a stop came first.
   */
  private boolean awaitStartTime() {
    boolean pausable = RunWorkflowVersions.has(PAUSE_WHILE_PENDING);
    while (!requests.stopRequested) {
      if (pausable) {
        applyPause();
      }
      long waitMillis =
          run.settings.startAt() == null
              ? 0
              : run.settings.startAt().toEpochMilli() - Workflow.currentTimeMillis();
      boolean held = pausable && requests.paused;
      if (waitMillis <= 0 && !held) {
        break;
      }
      Supplier<Boolean> news =
          () ->
              requests.stopRequested
                  || requests.retryAnswersOwed()
                  || pausable && requests.earlyPause != null;
      if (waitMillis > 0) {
        Workflow.await(Duration.ofMillis(waitMillis), news);
      } else {
        Workflow.await(news);
      }
      if (requests.retryAnswersOwed()) {
        // A pending run has no batches yet.
        requests.retryRequested = false;
        requests.answerRetries(
            RetryAnswer.refused(RunControl.nothingToRequeue(run.runId, RunStatus.PENDING)));
      }
    }
    return !requests.stopRequested;
  }

  /**
   * Takes the last pause or resume signalled while the run is pending (kept by {@link
   * RunRequests#pause} until the run is under way): a pause is recorded {@code paused} at once, a
   * resume {@code pending} again (the run starts at its start time, or now if that has passed).
   */
  private void applyPause() {
    Boolean asked = requests.earlyPause;
    if (asked == null) {
      return;
    }
    requests.earlyPause = null;
    if (asked == requests.paused) {
      return;
    }
    requests.paused = asked;
    requests.pauseRecorded = asked;
    run.status = asked ? RunStatus.PAUSED : RunStatus.PENDING;
    log.info("run {} is {} before its start", run.runId, run.status.wire());
    run.runs.recordStatus(new StatusChange(run.runId, run.status));
    run.publishStatus();
  }
}
