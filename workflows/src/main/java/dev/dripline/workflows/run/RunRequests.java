package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.EARLY_PAUSE_RESUME;
import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_RECONCILED;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_IGNORED_WHILE_STOPPING;

import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowLock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * What operators asked of a run — stop, retry, pause, resume, a cap change; by signal or Update —
 * kept until the workflow's loop applies it ({@link #apply}). The handlers only take note, and
 * judge a request against the run's state with {@link RunControl}; what a request changes in the
 * run's record is written in the loop, through the run's activities.
 *
 * <p>Requests that come before the run's status is known ({@link #initialised}), or while the run
 * has ended and a retry not yet handled may re-open it, are kept for later instead of being judged
 * now.
 */
final class RunRequests {
  private static final Logger log = Workflow.getLogger(RunRequests.class);

  private final RunLedger run;

  boolean stopRequested;
  boolean retryRequested;
  boolean paused;

  /** The pause the run's record holds, as far as this execution knows. */
  boolean pauseRecorded;

  /**
   * A pause or resume was taken since the status was last recorded. A pair of them leaves {@link
   * #paused} as {@link #pauseRecorded}, yet the record may differ: a workflow task that recorded
   * the first and then failed (its worker lost, or its continue-as-new rejected because the second
   * came meanwhile) is replayed with both, and its write stays.
   */
  boolean pauseAsked;

  boolean capChanged;

  /** Something happened that the loop should look at. */
  boolean woken;

  /** The stop was recorded on the run (chains read it before taking their next batch). */
  boolean stopRecorded;

  /**
   * False until the workflow has read the run's record (or its carry-over). Signals are delivered
   * before the workflow method runs in a new execution — a retry's or the reconciler's
   * signal-with-start, a continue-as-new — so pause and resume are kept in {@link #earlyPause}
   * until the status they apply to is known, instead of being judged against the defaults.
   */
  boolean initialised;

  /**
   * A pause (true) or resume (false) signalled before {@link #initialised}, or after a retry that
   * has not yet re-opened an ended run; the last one wins.
   */
  Boolean earlyPause;

  /** A stop that came after a retry not yet handled while the run had ended. */
  boolean stopAfterRetry;

  /** A cap change that came after a retry not yet handled while the run had ended. */
  Integer capAfterRetry;

  /**
   * Answers owed to retry Updates, given where the retry they asked for is handled — the same place
   * as a {@code retry} signal's — so that the answer is what the retry did.
   */
  private final List<CompletablePromise<RetryAnswer>> retryAnswers = new ArrayList<>();

  /** Serialises cap changes, so the record ends with the cap this workflow holds last. */
  private final WorkflowLock capLock = Workflow.newWorkflowLock();

  RunRequests(RunLedger run) {
    this.run = run;
  }

  void stop() {
    if (afterPendingRetry()) {
      stopAfterRetry = true;
      return;
    }
    if (ignored(RunControl.Request.STOP, false)) {
      return;
    }
    stopRequested = true;
    woken = true;
  }

  void retry() {
    retryRequested = true;
    woken = true;
  }

  /** A retry whose caller waits for what it did: answered where the retry is handled. */
  RetryAnswer retryAndAnswer() {
    CompletablePromise<RetryAnswer> answer = Workflow.newPromise();
    retryAnswers.add(answer);
    retry();
    return answer.get();
  }

  boolean retryAnswersOwed() {
    return !retryAnswers.isEmpty();
  }

  /** Gives every Update waiting for a retry's outcome {@code answer}. */
  void answerRetries(RetryAnswer answer) {
    for (CompletablePromise<RetryAnswer> waiting : retryAnswers) {
      waiting.complete(answer);
    }
    retryAnswers.clear();
  }

  void pause() {
    if (!initialised || afterPendingRetry()) {
      earlyPause = true;
      return;
    }
    if (ignored(RunControl.Request.PAUSE, stopRequested)) {
      return;
    }
    paused = true;
    pauseAsked = true;
    woken = true;
  }

  void resume() {
    if (!initialised || afterPendingRetry()) {
      earlyPause = false;
      return;
    }
    if (!paused) {
      log.info("run {}: resume ignored, the run is not paused", run.runId);
      return;
    }
    paused = false;
    pauseAsked = true;
    woken = true;
  }

  /** A cap change by signal: applied by the loop. */
  void changeCapLater(int maxParallelBatches) {
    if (maxParallelBatches < 1) {
      log.warn("run {}: cap change ignored, maxParallelBatches must be at least 1", run.runId);
      return;
    }
    if (afterPendingRetry()) {
      capAfterRetry = maxParallelBatches;
      return;
    }
    if (ignored(RunControl.Request.CHANGE_CAP, false)) {
      return;
    }
    run.requestedCap = maxParallelBatches;
    capChanged = true;
    woken = true;
  }

  /**
   * A cap change by Update: applied and recorded before answering, so the record shows it once the
   * caller has the answer; a pending run's cap is recorded too, for when it starts.
   */
  CapAnswer changeCapNow(int maxParallelBatches) {
    Workflow.await(() -> run.window != null || run.settings != null && !run.settings.found());
    capLock.lock();
    try {
      if (!run.settings.found()) {
        return CapAnswer.gone();
      }
      Optional<String> refusal =
          RunControl.refusal(run.runId, RunControl.Request.CHANGE_CAP, run.status, false);
      if (refusal.isPresent() || run.waitingForRetry) {
        return CapAnswer.refused(
            refusal.orElse(
                "run " + run.runId + " is " + run.status.wire() + "; its cap cannot change"));
      }
      run.requestedCap = maxParallelBatches;
      capChanged = false;
      run.applyCap();
      run.runs.recordCap(new CapRecord(run.runId, run.requestedCap, run.slots.cap()));
      woken = true;
      run.window.lookSoon();
      run.publishDetails();
      return CapAnswer.changed(run.requestedCap, run.slots.cap());
    } finally {
      capLock.unlock();
    }
  }

  /** Rejects an Update its caller no longer waits for: applied now, it would be applied unseen. */
  static void rejectIfLate(Long answerByMillis) {
    if (answerByMillis != null && Workflow.currentTimeMillis() > answerByMillis) {
      throw new IllegalStateException(
          "the request arrived after its caller stopped waiting ("
              + Instant.ofEpochMilli(answerByMillis)
              + "); nothing was changed");
    }
  }

  /** Applies a pause or resume that arrived before the run's status was known. */
  void applyEarlyPause() {
    if (earlyPause == null || !RunWorkflowVersions.has(EARLY_PAUSE_RESUME)) {
      return;
    }
    if (earlyPause) {
      pause();
    } else {
      resume();
    }
    earlyPause = null;
  }

  /** Applies what was asked, in the workflow's own thread. */
  void apply() {
    if (stopRequested && !stopRecorded) {
      // Chains read it before taking their next batch.
      stopRecorded = true;
      run.runs.recordStopRequested(run.ref());
    }
    if (retryRequested
        && stopRequested
        && !run.status.isTerminal()
        && RunWorkflowVersions.has(RETRY_IGNORED_WHILE_STOPPING)) {
      retryRequested = false;
      String refusal =
          RunControl.refusal(run.runId, RunControl.Request.RETRY, run.status, true).orElseThrow();
      log.info("run {}: retry ignored: {}", run.runId, refusal);
      answerRetries(RetryAnswer.refused(refusal));
    }
    if (retryRequested) {
      applyRetry();
    }
    if (capChanged) {
      capLock.lock();
      try {
        capChanged = false;
        run.applyCap();
        run.runs.recordCap(new CapRecord(run.runId, run.requestedCap, run.slots.cap()));
      } finally {
        capLock.unlock();
      }
      run.publishDetails();
      run.window.lookSoon();
    }
    if (pauseUnrecorded()) {
      pauseRecorded = paused;
      pauseAsked = false;
      run.window.lookSoon();
      run.status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
      run.runs.recordStatus(new StatusChange(run.runId, run.status));
      run.publishStatus();
    }
  }

  /**
   * Whether the run's record may not hold {@link #paused}: a pause or resume not yet recorded, or a
   * pair of them ({@link #pauseAsked}); a stopping run's status is the stop's to write.
   */
  boolean pauseUnrecorded() {
    if (stopRequested || !pauseAsked && paused == pauseRecorded) {
      return false;
    }
    return paused != pauseRecorded || RunWorkflowVersions.has(PAUSE_RECONCILED);
  }

  /** A retry of a live run (R8): re-queues in PostgreSQL and answers the Updates that asked. */
  private void applyRetry() {
    retryRequested = false;
    RunStatus before = run.status;
    RequeueResult requeue = run.runs.requeue(run.requeueRequest());
    log.info("run {}: retry re-queued {} batches", run.runId, requeue.requeued());
    run.window.clearError();
    run.mayHavePending = true;
    if (requeue.status() == null) {
      answerRetries(RetryAnswer.gone());
    } else if (requeue.requeued() > 0 || before.isTerminal() && requeue.status().isActive()) {
      answerRetries(RetryAnswer.requeued(requeue.requeued()));
    } else {
      answerRetries(RetryAnswer.refused(RunControl.nothingToRequeue(run.runId, requeue.status())));
    }
    if (requeue.status() != null && requeue.status().isActive()) {
      run.status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
      run.finishedAt = null;
      run.publishStatus();
    }
  }

  /**
   * Whether a signal arrives while the run has ended and after a retry that may re-open it, not yet
   * handled: the signal then applies once that retry has re-opened the run.
   */
  private boolean afterPendingRetry() {
    return run.waitingForRetry && retryRequested;
  }

  /**
   * Whether the run refuses {@code request} now ({@link RunControl}); if so, says so in the log.
   */
  private boolean ignored(RunControl.Request request, boolean stopping) {
    Optional<String> refusal = RunControl.refusal(run.runId, request, run.status, stopping);
    refusal.ifPresent(reason -> log.info("{} ignored: {}", request, reason));
    return refusal.isPresent();
  }
}
