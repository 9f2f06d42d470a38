package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.CAP_FROM_SETTINGS;
import static dev.dripline.workflows.run.RunWorkflowVersions.KEEP_EARLY_STOP_AND_RETRY;
import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_RECONCILED;
import static dev.dripline.workflows.run.RunWorkflowVersions.RECOVER_ORPHAN_SLOTS;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_IGNORED_WHILE_STOPPING;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_OF_ENDED_RUN;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;

/**
 * The run engine. It keeps only a cursor, flags and counters ({@link RunLedger}); batches live in
 * PostgreSQL. The loop applies what operators asked ({@link RunRequests}), fills free slots and
 * takes outcomes ({@link BatchLanes}), and finishes the run when nothing is left; a run that ended
 * failed or stopped then waits for a retry ({@link EndedRunWait}).
 *
 * <p>The slots it holds ({@link SlotBook}) are the run's semaphore: an activity is started only
 * while fewer than the effective cap are held, and gives its slot back only once its outcome is
 * recorded, so the cap holds across retries and restarts. Planning runs ahead in the background, a
 * window of pending batches ahead. Continue-as-new happens only with no slot held and no planning
 * under way.
 */
public class BackfillRunWorkflowImpl implements BackfillRunWorkflow {
  private static final Logger log = Workflow.getLogger(BackfillRunWorkflowImpl.class);

  private final RunLedger run = new RunLedger();
  private final RunRequests requests = new RunRequests(run);
  private final BatchLanes lanes = new BatchLanes(run, requests);
  private final EndedRunWait ended = new EndedRunWait(run, requests);
  private final RunStart start = new RunStart(run, requests, ended);

  @Override
  public RunOutcome run(RunWorkflowInput input) {
    RunOutcome outcome = drive(input);
    // A retry asked as the run's workflow ends — also while it waits here for its handlers — is
    // refused, never left unanswered.
    RetryAnswer ending =
        run.settings != null && !run.settings.found()
            ? RetryAnswer.gone()
            : RetryAnswer.refused(
                run.status == RunStatus.COMPLETED
                    ? RunControl.nothingToRequeue(run.runId, run.status)
                    : "the workflow of run " + run.runId + " was ending; try again");
    do {
      requests.answerRetries(ending);
      Workflow.await(() -> requests.retryAnswersOwed() || Workflow.isEveryHandlerFinished());
    } while (requests.retryAnswersOwed() || !Workflow.isEveryHandlerFinished());
    return outcome;
  }

  private RunOutcome drive(RunWorkflowInput input) {
    run.runId = input.runId();
    run.settings = run.runs.loadRun(run.ref());
    if (!run.settings.found()) {
      log.info("run {} no longer exists; nothing to do", run.runId);
      return new RunOutcome(null, 0);
    }
    configure();
    RunCarryOver carried = input.carried();
    if (carried != null) {
      restore(carried);
      if (carried.endedStatus() != null && !ended.goesOnAfterContinuing(carried)) {
        return outcome();
      }
    } else {
      run.status = run.settings.status();
      if (run.status == RunStatus.PAUSED && run.settings.startedAt() == null) {
        // Paused before it started (R9): a new execution of it waits as the first one did.
        requests.paused = true;
        requests.pauseRecorded = true;
      }
      if (run.status == RunStatus.PENDING || requests.paused && run.settings.startedAt() == null) {
        RunOutcome notStarted = start.await();
        if (notStarted != null) {
          return notStarted;
        }
      } else if (run.status.isTerminal()) {
        if (!requests.retryRequested
            || !RunWorkflowVersions.has(RETRY_OF_ENDED_RUN)
            || !retriedAfterEnd()) {
          return outcome();
        }
      } else {
        // A new execution of a live run: revived by a retry, or after a terminated execution.
        run.runs.recoverSlots(run.ref());
        requests.paused = run.status == RunStatus.PAUSED;
        requests.pauseRecorded = requests.paused;
        if (run.settings.stopRequested() && RunWorkflowVersions.has(KEEP_EARLY_STOP_AND_RETRY)) {
          // The execution that took the stop is gone; its record remembers it.
          requests.stopRequested = true;
        }
      }
    }
    requests.initialised = true;
    requests.applyEarlyPause();
    run.publishStatus();
    return loop();
  }

  private void configure() {
    if (!requests.capChanged) {
      // A cap signal may have been handled while the settings were loading; it wins.
      run.requestedCap = run.settings.requestedCap();
    }
    run.applyCap();
    run.totalKeys = run.settings.totalKeys();
    run.processedKeys = run.settings.processedKeys();
    run.startedAt = run.settings.startedAt();
    lanes.configure();
  }

  private void restore(RunCarryOver carried) {
    if (!RunWorkflowVersions.has(CAP_FROM_SETTINGS)) {
      run.slots.setCap(carried.effectiveCap());
    }
    // Else the cap configure() computed stands: the record's requested cap (kept current by every
    // cap change, recorded before the hand-over) or one signalled before the load, bounded by the
    // definition's and the engine's caps as deployed now.
    requests.paused = carried.paused();
    requests.pauseRecorded = requests.paused;
    RunStatus recorded = run.settings.status();
    boolean recordedPaused = recorded == RunStatus.PAUSED;
    if (carried.endedStatus() == null
        && (recordedPaused || recorded == RunStatus.RUNNING)
        && recordedPaused != requests.paused
        && RunWorkflowVersions.has(PAUSE_RECONCILED)) {
      // A status write was lost at the hand-over; the workflow, the record's one writer, records
      // the pause it carries (the loop's first apply).
      log.info(
          "run {}: record says {}, the workflow carried pause={}",
          run.runId,
          recorded,
          requests.paused);
      requests.pauseRecorded = recordedPaused;
    }
    if (RunWorkflowVersions.has(KEEP_EARLY_STOP_AND_RETRY)) {
      // A stop or retry may have been handled already, delivered before this execution loaded the
      // run (at the continue-as-new boundary, or while loadRun waited for the database). The
      // record's stop counts for a live run only: a stopped run's record keeps it until a retry.
      requests.stopRequested |=
          carried.stopRequested()
              || (carried.endedStatus() == null && run.settings.stopRequested());
      requests.retryRequested |= carried.retryRequested();
    } else {
      requests.stopRequested = carried.stopRequested();
      requests.retryRequested = carried.retryRequested();
    }
    run.window.setDone(carried.planningDone());
    run.totalKeys = carried.totalKeys();
    // PostgreSQL's count as this execution loaded it (configure) is exact; the carried one may have
    // fallen short (see RunLedger.takeProcessedKeys).
    run.processedKeys = Math.max(run.processedKeys, carried.processedKeys());
    run.startedAt =
        carried.startedAtMillis() == null ? null : Instant.ofEpochMilli(carried.startedAtMillis());
    run.claimSequence = carried.claimSequence();
    run.status = requests.paused ? RunStatus.PAUSED : RunStatus.RUNNING;
  }

  /** A fresh execution of an ended run, started for a retry: true if the retry re-opened it. */
  private boolean retriedAfterEnd() {
    requests.initialised = true;
    return ended.retry() == EndedRunWait.Outcome.REOPENED;
  }

  private RunOutcome loop() {
    while (true) {
      requests.woken = false;
      requests.apply();
      lanes.startBatches();
      run.publishDetails();
      if (run.slots.isEmpty() && !run.window.underWay()) {
        boolean finishes =
            requests.stopRequested || run.window.over() && !run.mayHavePending && !requests.paused;
        if (finishes) {
          RunOutcome outcome = finish();
          if (outcome != null) {
            return outcome;
          }
          continue;
        }
        if (run.continueAsNewDue()) {
          continueAsNew();
        }
      }
      lanes.awaitNews();
    }
  }

  /**
   * Asks PostgreSQL to finish the run (R5, {@link RunEnding}).
   *
   * @return the workflow's outcome, or null if the run goes on (refused, or re-opened by a retry)
   */
  private RunOutcome finish() {
    FinishResult finish =
        run.runs.finish(new FinishRequest(run.runId, requests.stopRequested, run.window.error()));
    if (finish.finished() && (!requests.retryRequested || ended.waitsForRetry(finish.status()))) {
      run.ended(finish);
      run.publishStatus();
      if (run.status == null || !ended.waitsForRetry(run.status) || !ended.await()) {
        return outcome();
      }
      return null; // Re-opened by a retry.
    }
    if (finish.finished() && RunWorkflowVersions.has(RETRY_IGNORED_WHILE_STOPPING)) {
      // A retry raced the finish: it applies to the run as it ended, whose stop is over.
      if (finish.status() == null) {
        log.info("run {} no longer exists; nothing to do", run.runId);
        return outcome();
      }
      run.ended(finish);
      requests.stopRequested = false;
      requests.stopRecorded = false;
      return null;
    }
    if (RunWorkflowVersions.has(RECOVER_ORPHAN_SLOTS)) {
      awaitOrRecoverSlots();
      if (run.continueAsNewDue()) {
        continueAsNew();
      }
      return null;
    }
    // A batch appeared (a retry raced the finish): go on, without spinning.
    if (run.fruitlessFinishes++ > 0) {
      Workflow.sleep(Duration.ofSeconds(5));
    }
    run.mayHavePending = true;
    return null;
  }

  /**
   * After a refused {@code finish} with nothing in flight here: a batch is pending (a retry raced
   * the finish) or holds a slot in PostgreSQL that no activity of this execution holds (one of a
   * lost execution, or of a worker that died). Slots whose holder is provably dead are recovered
   * (back to pending, then claimed or stopped); while none is, the workflow waits between looks
   * instead of spinning.
   */
  private void awaitOrRecoverSlots() {
    int recovered = run.runs.recoverSlots(run.ref());
    if (recovered > 0) {
      log.info("run {}: recovered {} slots held by no live batch", run.runId, recovered);
    } else if (run.fruitlessFinishes++ > 0) {
      Workflow.sleep(Duration.ofSeconds(5));
    }
    run.mayHavePending = true;
  }

  private void continueAsNew() {
    // A retry Update waits for the loop's answer: applied here, then its handler finishes. A pause
    // or resume handled while this applies is recorded too, not only carried.
    do {
      Workflow.await(() -> requests.retryRequested || Workflow.isEveryHandlerFinished());
      requests.apply();
    } while (!Workflow.isEveryHandlerFinished()
        || requests.pauseUnrecorded() && RunWorkflowVersions.has(PAUSE_RECONCILED));
    RunCarryOver carry =
        run.carryOver(requests.paused, requests.stopRequested, requests.retryRequested, null);
    log.info("run {}: continuing as new after {} batches", run.runId, run.batchesStartedHere);
    Workflow.continueAsNew(new RunWorkflowInput(run.runId, carry));
  }

  private RunOutcome outcome() {
    return new RunOutcome(run.status, run.processedKeys);
  }

  @Override
  public void stop() {
    requests.stop();
  }

  @Override
  public void retry() {
    requests.retry();
  }

  @Override
  public void validateRetryRun(RetryRequest request) {
    RunRequests.rejectIfLate(request == null ? null : request.answerByMillis());
  }

  @Override
  public RetryAnswer retryRun(RetryRequest request) {
    return requests.retryAndAnswer();
  }

  @Override
  public void validateChangeCap(CapUpdate update) {
    if (update == null || update.maxParallelBatches() < 1) {
      throw new IllegalArgumentException("maxParallelBatches must be at least 1");
    }
    RunRequests.rejectIfLate(update.answerByMillis());
  }

  @Override
  public CapAnswer changeCap(CapUpdate update) {
    return requests.changeCapNow(update.maxParallelBatches());
  }

  @Override
  public void pause() {
    requests.pause();
  }

  @Override
  public void resume() {
    requests.resume();
  }

  @Override
  public void setMaxParallelBatches(CapChange change) {
    requests.changeCapLater(change == null ? 0 : change.maxParallelBatches());
  }

  @Override
  public RunProgressView progress() {
    return new RunProgressView(
        run.runId, run.status, run.slots.held(), run.slots.cap(), run.progress());
  }
}
