package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.ENDED_RUN_WAITS_FOR_RETRY;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;

/**
 * A run that ended failed or stopped keeps its workflow open for a retry — the API's, or the
 * Temporal CLI's or Web UI's {@code retry} signal — for {@code ended-run-retry-window}, continuing
 * as new while it waits. A retry re-queues as the endpoint does (R8) and, if that re-opened the
 * run, the run goes on in the same workflow ({@link #revive}); with nothing to re-queue it is
 * answered and logged, and the run stays as it ended.
 */
final class EndedRunWait {
  private static final Logger log = Workflow.getLogger(EndedRunWait.class);

  /**
   * How often an ended run's workflow looks at the run's record while it waits for a retry: a
   * deleted run ends it, and a run re-opened in its record (by a build from before the workflow was
   * its run's only writer) goes on.
   */
  static final Duration ENDED_RUN_LOOK = Duration.ofMinutes(10);

  /** Wake-ups of an ended run's workflow per execution before it continues as new. */
  static final int MAX_WAKES_WHILE_ENDED = 100;

  private final RunLedger run;
  private final RunRequests requests;

  /** Wake-ups of this execution while the run had ended. */
  private int wakes;

  EndedRunWait(RunLedger run, RunRequests requests) {
    this.run = run;
    this.requests = requests;
  }

  /** Whether the workflow of a run that ended in {@code ended} stays open for a retry. */
  boolean waitsForRetry(RunStatus ended) {
    return (ended == RunStatus.FAILED || ended == RunStatus.STOPPED)
        && run.settings.endedRunRetryWindowMillis() > 0
        && RunWorkflowVersions.has(ENDED_RUN_WAITS_FOR_RETRY);
  }

  /**
   * The execution that follows one whose ended run waited for a retry: it waits on, unless the run
   * was re-opened in its record meanwhile (a retry recorded by the API whose signal never reached
   * the workflow). Signals received before the load apply only after a retry received with them.
   *
   * @return true if the run goes on, false if the workflow completes
   */
  boolean goesOnAfterContinuing(RunCarryOver carried) {
    run.status = carried.endedStatus();
    run.finishedAt =
        carried.endedAtMillis() == null ? null : Instant.ofEpochMilli(carried.endedAtMillis());
    run.retryDeadlineMillis = carried.retryDeadlineMillis();
    requests.paused = false;
    requests.pauseRecorded = false;
    requests.pauseAsked = false;
    requests.stopAfterRetry = requests.stopRequested && requests.retryRequested;
    if (requests.capChanged) {
      requests.capAfterRetry = requests.retryRequested ? run.requestedCap : null;
      requests.capChanged = false;
      run.requestedCap = run.settings.requestedCap();
      run.applyCap();
    }
    requests.initialised = true;
    run.publishStatus();
    if (run.settings.status().isActive()) {
      log.info("run {} was re-opened in its record; it goes on", run.runId);
      requests.stopAfterRetry |= run.settings.stopRequested();
      revive(run.settings.status());
      return true;
    }
    return await();
  }

  /**
   * Waits for a retry until the window ends. Every {@link #ENDED_RUN_LOOK} the run's record is
   * read: deleted, the workflow ends; re-opened (a retry the API recorded but could not signal),
   * the run goes on.
   *
   * @return true if the run goes on, false if the workflow completes
   */
  boolean await() {
    run.waitingForRetry = true;
    requests.initialised = true;
    // The stop that ended the run is over; a signal from now on applies only after a retry.
    requests.stopRequested = false;
    requests.stopRecorded = false;
    if (!requests.retryRequested) {
      requests.earlyPause = null;
    }
    if (run.retryDeadlineMillis == null) {
      run.retryDeadlineMillis =
          Workflow.currentTimeMillis() + run.settings.endedRunRetryWindowMillis();
      log.info(
          "run {} is {}; its workflow waits for a retry until {}",
          run.runId,
          run.status.wire(),
          Instant.ofEpochMilli(run.retryDeadlineMillis));
    }
    run.publishDetails();
    while (true) {
      if (requests.retryRequested) {
        Outcome retried = retry();
        if (retried != Outcome.NOTHING) {
          return goesOn(retried);
        }
      }
      long left = run.retryDeadlineMillis - Workflow.currentTimeMillis();
      if (left <= 0) {
        log.info("run {}: no retry within its window; its workflow completes", run.runId);
        run.waitingForRetry = false;
        return false;
      }
      if (wakes >= MAX_WAKES_WHILE_ENDED || Workflow.getInfo().isContinueAsNewSuggested()) {
        continueAsNew();
        continue;
      }
      boolean signalled =
          Workflow.await(
              Duration.ofMillis(Math.min(left, ENDED_RUN_LOOK.toMillis())),
              () -> requests.retryRequested);
      wakes++;
      if (!signalled) {
        Outcome looked = lookAtRecord();
        if (looked != Outcome.NOTHING) {
          return goesOn(looked);
        }
      }
    }
  }

  private boolean goesOn(Outcome outcome) {
    if (outcome == Outcome.GONE) {
      run.waitingForRetry = false;
    }
    return outcome == Outcome.REOPENED;
  }

  /** Reads the run's record after a quiet wait: deleted, or re-opened in its record (revived). */
  private Outcome lookAtRecord() {
    RunSettings record = run.runs.loadRun(run.ref());
    if (!record.found()) {
      log.info("run {} no longer exists; its workflow ends", run.runId);
      return Outcome.GONE;
    }
    if (!record.status().isActive()) {
      return Outcome.NOTHING;
    }
    log.info("run {} was re-opened in its record; it goes on", run.runId);
    // A stop or cap change the API recorded since then reached this workflow as ignored.
    requests.stopAfterRetry |= record.stopRequested();
    if (record.requestedCap() != null && !record.requestedCap().equals(run.requestedCap)) {
      requests.capAfterRetry = record.requestedCap();
    }
    revive(record.status());
    return Outcome.REOPENED;
  }

  /** What a retry of an ended run, or a look at its record, came to. */
  enum Outcome {
    /** The run no longer exists. */
    GONE,
    /** Batches were re-queued (or planning re-opened): the run goes on ({@link #revive}d). */
    REOPENED,
    /** Nothing to re-queue: the run stays as it ended. */
    NOTHING
  }

  /**
   * Retries the ended run as the endpoint does (R8): re-queues in PostgreSQL, answers the Updates
   * that asked, and revives the run if the re-queue re-opened it.
   */
  Outcome retry() {
    requests.retryRequested = false;
    RequeueResult requeue = run.runs.requeue(run.requeueRequest());
    if (requeue.status() == null) {
      log.info("run {} no longer exists; its workflow ends", run.runId);
      requests.answerRetries(RetryAnswer.gone());
      return Outcome.GONE;
    }
    if (requeue.status().isActive()) {
      log.info(
          "run {}: retry re-queued {} batches; the run goes on", run.runId, requeue.requeued());
      requests.answerRetries(RetryAnswer.requeued(requeue.requeued()));
      revive(requeue.status());
      return Outcome.REOPENED;
    }
    String refusal = RunControl.nothingToRequeue(run.runId, requeue.status());
    log.info("run {}: retry ignored: {}", run.runId, refusal);
    requests.answerRetries(RetryAnswer.refused(refusal));
    requests.stopAfterRetry = false;
    requests.capAfterRetry = null;
    requests.earlyPause = null;
    return Outcome.NOTHING;
  }

  /**
   * The run goes on after it had ended: re-opened by a retry ({@code recorded} as its status). A
   * stop, pause, resume or cap change that came after the retry applies now.
   */
  private void revive(RunStatus recorded) {
    run.waitingForRetry = false;
    run.retryDeadlineMillis = null;
    run.status = recorded == RunStatus.PAUSED ? RunStatus.PAUSED : RunStatus.RUNNING;
    requests.paused = run.status == RunStatus.PAUSED;
    requests.pauseRecorded = requests.paused;
    requests.pauseAsked = false;
    requests.stopRequested = requests.stopAfterRetry;
    requests.stopAfterRetry = false;
    requests.stopRecorded = false;
    if (requests.capAfterRetry != null) {
      run.requestedCap = requests.capAfterRetry;
      requests.capChanged = true;
      requests.capAfterRetry = null;
    }
    run.window.clearError();
    run.mayHavePending = true;
    run.finishedAt = null;
    run.fruitlessFinishes = 0;
    run.window.lookSoon();
    run.publishStatus();
    requests.applyEarlyPause();
  }

  /** Continues as new while the run has ended and waits for a retry (history stays small). */
  private void continueAsNew() {
    // A retry Update waits for the loop's answer: handled first, as a retry signal is.
    Workflow.await(() -> requests.retryRequested || Workflow.isEveryHandlerFinished());
    if (requests.retryRequested) {
      // Handled first, in this execution.
      return;
    }
    RunCarryOver carry = run.carryOver(false, false, false, run.status);
    log.info("run {}: continuing as new while it waits for a retry", run.runId);
    Workflow.continueAsNew(new RunWorkflowInput(run.runId, carry));
  }
}
