package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.CAP_FROM_SETTINGS;
import static dev.dripline.workflows.run.RunWorkflowVersions.EARLY_PACE;
import static dev.dripline.workflows.run.RunWorkflowVersions.EARLY_PAUSE_RESUME;
import static dev.dripline.workflows.run.RunWorkflowVersions.ENDED_RUN_WAITS_FOR_RETRY;
import static dev.dripline.workflows.run.RunWorkflowVersions.KEEP_EARLY_STOP_AND_RETRY;
import static dev.dripline.workflows.run.RunWorkflowVersions.RECOVER_ORPHAN_SLOTS;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_IGNORED_WHILE_STOPPING;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_OF_ENDED_RUN;
import static dev.dripline.workflows.run.RunWorkflowVersions.WAIT_FOR_FULL_SLOTS;

import io.temporal.activity.ActivityOptions;
import io.temporal.workflow.Async;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowLock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * The run engine. It keeps only a cursor, flags and counters; batches live in PostgreSQL.
 *
 * <p>The slots it holds ({@link SlotBook}) are the run's semaphore: an activity is started only
 * while fewer than the effective cap are held, and gives its slot back only once its outcome is
 * recorded, so the cap holds across retries and restarts. Each activity holds one slot, its lane (1
 * to the cap), and one batch at a time: the batch it was given and then, for up to {@code
 * batch-chain-time}, further pending batches it takes itself (see BatchExecution). A chained batch
 * that fails comes back as a hand-off and goes on as a batch of its own, with retries. Planning
 * runs ahead of the chains in the background, a window of pending batches ahead. Continue-as-new
 * happens only with no slot held and no planning under way.
 */
public class BackfillRunWorkflowImpl implements BackfillRunWorkflow {
  private static final Logger log = Workflow.getLogger(BackfillRunWorkflowImpl.class);

  /** How long the workflow waits before claiming again after {@link ClaimResult#slotsFull()}. */
  static final Duration SLOTS_FULL_LOOK = Duration.ofSeconds(1);

  /**
   * How often an ended run's workflow looks at the run's record while it waits for a retry: a
   * deleted run ends it, and a run re-opened in its record (by a build from before the workflow was
   * its run's only writer) goes on.
   */
  static final Duration ENDED_RUN_LOOK = Duration.ofMinutes(10);

  /** Wake-ups of an ended run's workflow per execution before it continues as new. */
  static final int MAX_WAKES_WHILE_ENDED = 100;

  /** Short database operations; retried until the database answers (R12). */
  private final RunActivities runs =
      Workflow.newLocalActivityStub(RunActivities.class, DatabaseLocalActivities.options());

  private PlanningActivities planning;
  private ActivityOptions batchOptions;

  private long runId;
  private RunSettings settings;
  private RunStatus status = RunStatus.PENDING;
  private Integer requestedCap;
  private Long totalKeys;
  private long processedKeys;
  private Instant startedAt;
  private Instant finishedAt;
  private boolean mayHavePending = true;
  private long claimSequence;
  private int batchesStartedHere;
  private int fruitlessFinishes;

  private boolean stopRequested;
  private boolean retryRequested;
  private boolean paused;
  private boolean pauseRecorded;
  private boolean capChanged;
  private boolean woken;

  /** The last claim found the run's slots full in PostgreSQL; look again after a pause. */
  private boolean slotsFull;

  /**
   * False until {@link #run} has read the run's record (or its carry-over). Signals are delivered
   * before the workflow method runs in a new execution — a retry's or the reconciler's
   * signal-with-start, a continue-as-new — so pause and resume are kept in {@link #earlyPause}
   * until the status they apply to is known, instead of being judged against the defaults.
   */
  private boolean initialised;

  /**
   * A pause (true) or resume (false) signalled before {@link #initialised}, or after a retry that
   * has not yet re-opened an ended run; the last one wins.
   */
  private Boolean earlyPause;

  /**
   * True while the run has ended (failed or stopped) and its workflow waits for a retry. A stop,
   * pause, resume or cap change then does not apply and is ignored, unless it comes after a retry
   * not yet handled: it is kept for when that retry has re-opened the run.
   */
  private boolean waitingForRetry;

  /** Until when (workflow time) an ended run's workflow waits for a retry. */
  private Long retryDeadlineMillis;

  /** Wake-ups of this execution while the run had ended. */
  private int wakesWhileEnded;

  /** A stop that came after a retry not yet handled while the run had ended. */
  private boolean stopAfterRetry;

  /** A cap change that came after a retry not yet handled while the run had ended. */
  private Integer capAfterRetry;

  /** The slots this execution holds and the completions it has yet to handle. */
  private final SlotBook slots = new SlotBook();

  private ActivityOptions handoffOptions;

  /** Planning calls, their sizes and the window kept ahead of the chains; made by configure(). */
  private PlanWindow window;

  private boolean stopRecorded;

  /**
   * Answers owed to {@link #retryRun} Updates, given where the retry they asked for is handled —
   * the same place as a {@code retry} signal's — so that the answer is what the retry did.
   */
  private final List<CompletablePromise<RetryAnswer>> retryAnswers = new ArrayList<>();

  /** Serialises cap changes, so the record ends with the cap this workflow holds last. */
  private final WorkflowLock capLock = Workflow.newWorkflowLock();

  @Override
  public RunOutcome run(RunWorkflowInput input) {
    RunOutcome outcome = drive(input);
    // A retry asked as the run's workflow ends — also while it waits here for its handlers — is
    // refused, never left unanswered.
    RetryAnswer ending =
        settings != null && !settings.found()
            ? RetryAnswer.gone()
            : RetryAnswer.refused(
                status == RunStatus.COMPLETED
                    ? RunControl.nothingToRequeue(runId, status)
                    : "the workflow of run " + runId + " was ending; try again");
    do {
      answerRetries(ending);
      Workflow.await(() -> !retryAnswers.isEmpty() || Workflow.isEveryHandlerFinished());
    } while (!retryAnswers.isEmpty() || !Workflow.isEveryHandlerFinished());
    return outcome;
  }

  private RunOutcome drive(RunWorkflowInput input) {
    runId = input.runId();
    settings = runs.loadRun(new RunRef(runId));
    if (!settings.found()) {
      log.info("run {} no longer exists; nothing to do", runId);
      return new RunOutcome(null, 0);
    }
    configure();
    RunCarryOver carried = input.carried();
    if (carried != null) {
      restore(carried);
      if (carried.endedStatus() != null && !goesOnAfterContinuingEnded(carried)) {
        return new RunOutcome(status, processedKeys);
      }
    } else {
      status = settings.status();
      if (status == RunStatus.PENDING) {
        publishStatus();
        if (!awaitStartTime()) {
          RunOutcome stopped = endStoppedWhilePending();
          if (stopped != null) {
            return stopped;
          }
        } else {
          StartResult start = runs.markRunning(new RunRef(runId));
          if (start.started()) {
            startedAt = start.startedAt();
            status = RunStatus.RUNNING;
          } else {
            log.info("run {} did not start: it is {}", runId, start.status());
            if (start.status() == null || !waitsForRetry(start.status())) {
              return new RunOutcome(start.status(), processedKeys);
            }
            status = start.status();
            publishStatus();
            if (!awaitRetryWhileEnded()) {
              return new RunOutcome(status, processedKeys);
            }
          }
        }
      } else if (status.isTerminal()) {
        if (!retryRequested
            || Workflow.getVersion(RETRY_OF_ENDED_RUN, Workflow.DEFAULT_VERSION, 1)
                == Workflow.DEFAULT_VERSION
            || !retriedAfterEnd()) {
          return new RunOutcome(status, processedKeys);
        }
      } else {
        // A new execution of a live run: revived by a retry, or after a terminated execution.
        runs.recoverSlots(new RunRef(runId));
        paused = status == RunStatus.PAUSED;
        pauseRecorded = paused;
        if (settings.stopRequested() && keepsEarlyStopAndRetry()) {
          // The execution that took the stop is gone; its record remembers it.
          stopRequested = true;
        }
      }
    }
    initialised = true;
    applyEarlyPause();
    publishStatus();
    return loop();
  }

  /**
   * The execution that follows one whose ended run waited for a retry: it waits on, unless the run
   * was re-opened in its record meanwhile (a retry recorded by the API whose signal never reached
   * the workflow). Signals received before the load apply only after a retry received with them.
   *
   * @return true if the run goes on, false if the workflow completes
   */
  private boolean goesOnAfterContinuingEnded(RunCarryOver carried) {
    status = carried.endedStatus();
    finishedAt =
        carried.endedAtMillis() == null ? null : Instant.ofEpochMilli(carried.endedAtMillis());
    retryDeadlineMillis = carried.retryDeadlineMillis();
    paused = false;
    pauseRecorded = false;
    stopAfterRetry = stopRequested && retryRequested;
    if (capChanged) {
      capAfterRetry = retryRequested ? requestedCap : null;
      capChanged = false;
      requestedCap = settings.requestedCap();
      slots.setCap(effectiveCap());
    }
    initialised = true;
    publishStatus();
    if (settings.status().isActive()) {
      log.info("run {} was re-opened in its record; it goes on", runId);
      stopAfterRetry |= settings.stopRequested();
      revive(settings.status());
      return true;
    }
    return awaitRetryWhileEnded();
  }

  /** Applies a pause or resume that arrived before the run's status was known. */
  private void applyEarlyPause() {
    if (earlyPause == null
        || Workflow.getVersion(EARLY_PAUSE_RESUME, Workflow.DEFAULT_VERSION, 1)
            == Workflow.DEFAULT_VERSION) {
      return;
    }
    if (earlyPause) {
      pause();
    } else {
      resume();
    }
    earlyPause = null;
  }

  private void configure() {
    if (!capChanged) {
      // A cap signal may have been handled while the settings were loading; it wins.
      requestedCap = settings.requestedCap();
    }
    slots.setCap(effectiveCap());
    totalKeys = settings.totalKeys();
    processedKeys = settings.processedKeys();
    startedAt = settings.startedAt();
    window =
        new PlanWindow(
            runId,
            settings.planPageBatches(),
            settings.chainMillis(),
            settings.planningDone(),
            this::newPace);
    RunActivityOptions options =
        RunActivityOptions.of(settings.batchPolicy(), settings.chainMillis());
    batchOptions = options.batch();
    handoffOptions = options.handoff();
    planning = Workflow.newActivityStub(PlanningActivities.class, options.planning());
  }

  private void restore(RunCarryOver carried) {
    if (Workflow.getVersion(CAP_FROM_SETTINGS, Workflow.DEFAULT_VERSION, 1)
        == Workflow.DEFAULT_VERSION) {
      slots.setCap(carried.effectiveCap());
    }
    // Else the cap configure() computed stands: the record's requested cap (kept current by every
    // cap change, recorded before the hand-over) or one signalled before the load, bounded by the
    // definition's and the engine's caps as deployed now.
    paused = carried.paused();
    pauseRecorded = paused;
    if (keepsEarlyStopAndRetry()) {
      // A stop or retry may have been handled already, delivered before this execution loaded the
      // run (at the continue-as-new boundary, or while loadRun waited for the database). The
      // record's stop counts for a live run only: a stopped run's record keeps it until a retry.
      stopRequested |=
          carried.stopRequested() || (carried.endedStatus() == null && settings.stopRequested());
      retryRequested |= carried.retryRequested();
    } else {
      stopRequested = carried.stopRequested();
      retryRequested = carried.retryRequested();
    }
    window.setDone(carried.planningDone());
    totalKeys = carried.totalKeys();
    // PostgreSQL's count as this execution loaded it (configure) is exact; the carried one may have
    // fallen short (see takeProcessedKeys).
    processedKeys = Math.max(processedKeys, carried.processedKeys());
    startedAt =
        carried.startedAtMillis() == null ? null : Instant.ofEpochMilli(carried.startedAtMillis());
    claimSequence = carried.claimSequence();
    status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
  }

  private static boolean keepsEarlyStopAndRetry() {
    return Workflow.getVersion(KEEP_EARLY_STOP_AND_RETRY, Workflow.DEFAULT_VERSION, 1)
        != Workflow.DEFAULT_VERSION;
  }

  private static boolean ignoresRetryWhileStopping() {
    return Workflow.getVersion(RETRY_IGNORED_WHILE_STOPPING, Workflow.DEFAULT_VERSION, 1)
        != Workflow.DEFAULT_VERSION;
  }

  /** Waits until {@code startAt}; false if a stop came first. */
  private boolean awaitStartTime() {
    while (settings.startAt() != null && !stopRequested) {
      long waitMillis = settings.startAt().toEpochMilli() - Workflow.currentTimeMillis();
      if (waitMillis <= 0) {
        break;
      }
      Workflow.await(Duration.ofMillis(waitMillis), () -> stopRequested || !retryAnswers.isEmpty());
      if (retryAnswers.isEmpty()) {
        break;
      }
      // A pending run has no batches yet.
      retryRequested = false;
      answerRetries(RetryAnswer.refused(nothingToRequeue(RunStatus.PENDING)));
    }
    return !stopRequested;
  }

  /**
   * Takes PostgreSQL's count of processed keys from a finished run's record: the count this
   * workflow adds up from batch results falls short when a worker died mid-chain (its retried
   * attempt reports only what it completed itself).
   */
  private void takeProcessedKeys(FinishResult finish) {
    if (finish.processedKeys() != null) {
      processedKeys = finish.processedKeys();
    }
  }

  /** Ends a run stopped before it started; null if a retry re-opened it meanwhile. */
  private RunOutcome endStoppedWhilePending() {
    FinishResult finish = runs.finish(new FinishRequest(runId, true, null));
    status = finish.status() == null ? RunStatus.STOPPED : finish.status();
    finishedAt = finish.finishedAt();
    takeProcessedKeys(finish);
    publishStatus();
    if (finish.status() != null && waitsForRetry(status) && awaitRetryWhileEnded()) {
      return null;
    }
    return new RunOutcome(status, processedKeys);
  }

  /** Whether the workflow of a run that ended in {@code ended} stays open for a retry. */
  private boolean waitsForRetry(RunStatus ended) {
    return (ended == RunStatus.FAILED || ended == RunStatus.STOPPED)
        && settings.endedRunRetryWindowMillis() > 0
        && Workflow.getVersion(ENDED_RUN_WAITS_FOR_RETRY, Workflow.DEFAULT_VERSION, 1)
            != Workflow.DEFAULT_VERSION;
  }

  /**
   * Waits, the run having ended failed or stopped, for a {@code retry} signal — the same as the
   * API's retry — until the window ends, continuing as new as history grows. A retry re-queues like
   * the endpoint ({@code requeue}) and, if it re-opened the run, the run goes on in this workflow;
   * a retry with nothing to re-queue is ignored and logged. Every {@link #ENDED_RUN_LOOK} the run's
   * record is read: deleted, the workflow ends; re-opened (a retry the API recorded but could not
   * signal), the run goes on.
   *
   * @return true if the run goes on, false if the workflow completes
   */
  private boolean awaitRetryWhileEnded() {
    waitingForRetry = true;
    initialised = true;
    // The stop that ended the run is over; a signal from now on applies only after a retry.
    stopRequested = false;
    stopRecorded = false;
    if (!retryRequested) {
      earlyPause = null;
    }
    if (retryDeadlineMillis == null) {
      retryDeadlineMillis = Workflow.currentTimeMillis() + settings.endedRunRetryWindowMillis();
      log.info(
          "run {} is {}; its workflow waits for a retry until {}",
          runId,
          status.wire(),
          Instant.ofEpochMilli(retryDeadlineMillis));
    }
    Workflow.setCurrentDetails(details());
    while (true) {
      if (retryRequested) {
        switch (retryEnded()) {
          case GONE -> {
            waitingForRetry = false;
            return false;
          }
          case REOPENED -> {
            return true;
          }
          case NOTHING -> {}
        }
      }
      long left = retryDeadlineMillis - Workflow.currentTimeMillis();
      if (left <= 0) {
        log.info("run {}: no retry within its window; its workflow completes", runId);
        waitingForRetry = false;
        return false;
      }
      if (wakesWhileEnded >= MAX_WAKES_WHILE_ENDED
          || Workflow.getInfo().isContinueAsNewSuggested()) {
        continueAsNewWhileEnded();
        continue;
      }
      boolean signalled =
          Workflow.await(
              Duration.ofMillis(Math.min(left, ENDED_RUN_LOOK.toMillis())), () -> retryRequested);
      wakesWhileEnded++;
      if (!signalled) {
        RunSettings record = runs.loadRun(new RunRef(runId));
        if (!record.found()) {
          log.info("run {} no longer exists; its workflow ends", runId);
          waitingForRetry = false;
          return false;
        }
        if (record.status().isActive()) {
          log.info("run {} was re-opened in its record; it goes on", runId);
          // A stop or cap change the API recorded since then reached this workflow as ignored.
          stopAfterRetry |= record.stopRequested();
          if (record.requestedCap() != null && !record.requestedCap().equals(requestedCap)) {
            capAfterRetry = record.requestedCap();
          }
          revive(record.status());
          return true;
        }
      }
    }
  }

  /** What a retry of an ended run came to. */
  private enum EndedRetry {
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
  private EndedRetry retryEnded() {
    retryRequested = false;
    RequeueResult requeue = runs.requeue(new RunRef(runId));
    if (requeue.status() == null) {
      log.info("run {} no longer exists; its workflow ends", runId);
      answerRetries(RetryAnswer.gone());
      return EndedRetry.GONE;
    }
    if (requeue.status().isActive()) {
      log.info("run {}: retry re-queued {} batches; the run goes on", runId, requeue.requeued());
      answerRetries(RetryAnswer.requeued(requeue.requeued()));
      revive(requeue.status());
      return EndedRetry.REOPENED;
    }
    String refusal = nothingToRequeue(requeue.status());
    log.info("run {}: retry ignored: {}", runId, refusal);
    answerRetries(RetryAnswer.refused(refusal));
    stopAfterRetry = false;
    capAfterRetry = null;
    earlyPause = null;
    return EndedRetry.NOTHING;
  }

  /** A fresh execution of an ended run, started for a retry: true if the retry re-opened it. */
  private boolean retriedAfterEnd() {
    initialised = true;
    return retryEnded() == EndedRetry.REOPENED;
  }

  private String nothingToRequeue(RunStatus now) {
    return RunControl.nothingToRequeue(runId, now);
  }

  /** Gives every Update waiting for a retry's outcome {@code answer}. */
  private void answerRetries(RetryAnswer answer) {
    for (CompletablePromise<RetryAnswer> waiting : retryAnswers) {
      waiting.complete(answer);
    }
    retryAnswers.clear();
  }

  /**
   * The run goes on after it had ended: re-opened by a retry ({@code status} as recorded). A stop,
   * pause, resume or cap change that came after the retry applies now.
   */
  private void revive(RunStatus recorded) {
    waitingForRetry = false;
    retryDeadlineMillis = null;
    status = recorded == RunStatus.PAUSED ? RunStatus.PAUSED : RunStatus.RUNNING;
    paused = status == RunStatus.PAUSED;
    pauseRecorded = paused;
    stopRequested = stopAfterRetry;
    stopAfterRetry = false;
    stopRecorded = false;
    if (capAfterRetry != null) {
      requestedCap = capAfterRetry;
      capChanged = true;
      capAfterRetry = null;
    }
    window.clearError();
    mayHavePending = true;
    finishedAt = null;
    fruitlessFinishes = 0;
    window.lookSoon();
    publishStatus();
    applyEarlyPause();
  }

  /** Continues as new while the run has ended and waits for a retry (history stays small). */
  private void continueAsNewWhileEnded() {
    // A retry Update waits for the loop's answer: handled first, as a retry signal is.
    Workflow.await(() -> retryRequested || Workflow.isEveryHandlerFinished());
    if (retryRequested) {
      // Handled first, in this execution.
      return;
    }
    RunCarryOver carry =
        new RunCarryOver(
            slots.cap(),
            false,
            false,
            false,
            window.done(),
            totalKeys,
            processedKeys,
            startedAt == null ? null : startedAt.toEpochMilli(),
            claimSequence,
            status,
            finishedAt == null ? null : finishedAt.toEpochMilli(),
            retryDeadlineMillis);
    log.info("run {}: continuing as new while it waits for a retry", runId);
    Workflow.continueAsNew(new RunWorkflowInput(runId, carry));
  }

  private RunOutcome loop() {
    while (true) {
      woken = false;
      applyRequests();
      startBatches();
      Workflow.setCurrentDetails(details());
      if (slots.isEmpty() && !window.underWay()) {
        if (stopRequested || window.over() && !mayHavePending && !paused) {
          FinishResult finish =
              runs.finish(new FinishRequest(runId, stopRequested, window.error()));
          if (finish.finished() && (!retryRequested || waitsForRetry(finish.status()))) {
            status = finish.status();
            finishedAt = finish.finishedAt();
            takeProcessedKeys(finish);
            publishStatus();
            if (status == null || !waitsForRetry(status) || !awaitRetryWhileEnded()) {
              return new RunOutcome(status, processedKeys);
            }
            // Re-opened by a retry.
            continue;
          }
          if (finish.finished() && ignoresRetryWhileStopping()) {
            // A retry raced the finish: it applies to the run as it ended, whose stop is over.
            if (finish.status() == null) {
              log.info("run {} no longer exists; nothing to do", runId);
              return new RunOutcome(null, processedKeys);
            }
            status = finish.status();
            finishedAt = finish.finishedAt();
            takeProcessedKeys(finish);
            stopRequested = false;
            stopRecorded = false;
            continue;
          }
          if (Workflow.getVersion(RECOVER_ORPHAN_SLOTS, Workflow.DEFAULT_VERSION, 1)
              != Workflow.DEFAULT_VERSION) {
            awaitOrRecoverSlots();
            if (continueAsNewDue()) {
              continueAsNew();
            }
            continue;
          }
          // A batch appeared (a retry raced the finish): go on, without spinning.
          if (fruitlessFinishes++ > 0) {
            Workflow.sleep(Duration.ofSeconds(5));
          }
          mayHavePending = true;
          continue;
        }
        if (continueAsNewDue()) {
          continueAsNew();
        }
      }
      if (window.keepsAhead(stopRequested) && !window.underWay() && !slots.isEmpty()) {
        boolean happened =
            Workflow.await(
                Duration.ofMillis(window.lookEveryMillis()),
                () -> slots.hasCompletions() || woken || window.hasPlanned());
        if (!happened) {
          planNextPage();
        }
      } else if (slotsFull) {
        boolean happened =
            Workflow.await(
                SLOTS_FULL_LOOK, () -> slots.hasCompletions() || woken || window.hasPlanned());
        if (!happened && slots.isEmpty() && !window.underWay()) {
          // Nothing of this execution holds a slot: those that fill them may be dead by now.
          runs.recoverSlots(new RunRef(runId));
        }
      } else {
        Workflow.await(() -> slots.hasCompletions() || woken || window.hasPlanned());
      }
      slotsFull = false;
      if (slots.hasCompletions()) {
        fruitlessFinishes = 0;
      }
      handlePlanned();
      handleCompletions();
    }
  }

  /**
   * After a refused {@code finish} with nothing in flight here: a batch is pending (a retry raced
   * the finish) or holds a slot in PostgreSQL that no activity of this execution holds (one of a
   * lost execution, or of a worker that died). Slots whose holder is provably dead are recovered
   * (back to pending, then claimed or stopped); while none is, the workflow waits between looks
   * instead of spinning.
   */
  private void awaitOrRecoverSlots() {
    int recovered = runs.recoverSlots(new RunRef(runId));
    if (recovered > 0) {
      log.info("run {}: recovered {} slots held by no live batch", runId, recovered);
    } else if (fruitlessFinishes++ > 0) {
      Workflow.sleep(Duration.ofSeconds(5));
    }
    mayHavePending = true;
  }

  /** Applies what signals asked for, in the workflow's own thread. */
  private void applyRequests() {
    if (stopRequested && !stopRecorded) {
      // Chains read it before taking their next batch.
      stopRecorded = true;
      runs.recordStopRequested(new RunRef(runId));
    }
    if (retryRequested && stopRequested && !status.isTerminal() && ignoresRetryWhileStopping()) {
      retryRequested = false;
      String refusal =
          RunControl.refusal(runId, RunControl.Request.RETRY, status, true).orElseThrow();
      log.info("run {}: retry ignored: {}", runId, refusal);
      answerRetries(RetryAnswer.refused(refusal));
    }
    if (retryRequested) {
      retryRequested = false;
      RunStatus before = status;
      RequeueResult requeue = runs.requeue(new RunRef(runId));
      log.info("run {}: retry re-queued {} batches", runId, requeue.requeued());
      window.clearError();
      mayHavePending = true;
      if (requeue.status() == null) {
        answerRetries(RetryAnswer.gone());
      } else if (requeue.requeued() > 0 || before.isTerminal() && requeue.status().isActive()) {
        answerRetries(RetryAnswer.requeued(requeue.requeued()));
      } else {
        answerRetries(RetryAnswer.refused(nothingToRequeue(requeue.status())));
      }
      if (requeue.status() != null && requeue.status().isActive()) {
        status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
        finishedAt = null;
        publishStatus();
      }
    }
    if (capChanged) {
      capLock.lock();
      try {
        capChanged = false;
        slots.setCap(effectiveCap());
        runs.recordCap(new CapRecord(runId, requestedCap, slots.cap()));
      } finally {
        capLock.unlock();
      }
      Workflow.setCurrentDetails(details());
      window.lookSoon();
    }
    if (paused != pauseRecorded && !stopRequested) {
      pauseRecorded = paused;
      window.lookSoon();
      status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
      runs.recordStatus(new StatusChange(runId, status));
      publishStatus();
    }
  }

  /**
   * Fills free slots with the lowest-numbered pending batches, asking for the next page of the plan
   * when none remain, or when chains may soon run out of pending batches.
   */
  private void startBatches() {
    while (!stopRequested && !paused && !continueAsNewDue() && slots.free() > 0) {
      int free = slots.free();
      if (!mayHavePending) {
        planNextPage();
        break;
      }
      ClaimResult claim = runs.claimPending(new ClaimRequest(runId, claimSequence++, free));
      for (BatchRef batch : claim.batches()) {
        start(batch, slots.take(batch), batchOptions);
      }
      if (claim.batches().size() < free) {
        if (claim.slotsFull()
            && Workflow.getVersion(WAIT_FOR_FULL_SLOTS, Workflow.DEFAULT_VERSION, 1) == 1) {
          slotsFull = true;
          break;
        }
        mayHavePending = false;
      }
    }
    if (window.runsLow(slots.cap(), stopRequested)) {
      planNextPage();
    }
  }

  /** Starts the next planning call in the background, unless one is under way or none is needed. */
  private void planNextPage() {
    window
        .nextCall(slots.cap(), stopRequested)
        .ifPresent(
            request ->
                Async.function(planning::planNextPage, request)
                    .handle(
                        (page, failure) -> {
                          window.planned(page, failure);
                          return null;
                        }));
  }

  private void handlePlanned() {
    window.takePlanned().ifPresent(this::handlePlanned);
  }

  /** A planning call's outcome: a failure stops planning; a page may leave batches to claim. */
  private void handlePlanned(PlanWindow.Planned outcome) {
    if (outcome.failure() != null) {
      window.fail("planning failed: " + RunText.failure(outcome.failure()));
      log.warn("run {}: {}", runId, window.error());
      return;
    }
    PlanPage page = outcome.page();
    if (window.takePage(page, Workflow.currentTimeMillis(), slots.cap())) {
      mayHavePending = true;
    }
    if (page.done()) {
      totalKeys = page.totalKeys();
    }
  }

  /**
   * The chains' pace, made at its first use; executions that began before {@link
   * ChainPace#MIN_SPAN_MILLIS} existed (histories without the {@link #EARLY_PACE} marker) keep
   * measuring over the shortest look, as they did.
   */
  private ChainPace newPace() {
    return new ChainPace(
        Workflow.getVersion(EARLY_PACE, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION
            ? ChainPace.MIN_LOOK_MILLIS
            : ChainPace.MIN_SPAN_MILLIS);
  }

  private void start(BatchRef batch, int lane, ActivityOptions options) {
    long chainMillis = settings.chainMillis();
    BatchActivities activities =
        Workflow.newActivityStub(
            BatchActivities.class,
            options.toBuilder()
                .setSummary(
                    "batch "
                        + batch.number()
                        + " ["
                        + batch.startKey()
                        + ".."
                        + batch.endKey()
                        + "]"
                        + (chainMillis > 0 ? ", then pending ones, slot " + lane : ""))
                .build());
    batchesStartedHere++;
    Promise<BatchResult> result =
        Async.function(
            activities::processBatch,
            new BatchWork(runId, settings.backfill(), batch, lane, chainMillis));
    result.handle(
        (value, failure) -> {
          slots.completed(batch, value, failure);
          return null;
        });
  }

  private void handleCompletions() {
    if (!slots.hasCompletions()) {
      return;
    }
    while (slots.hasCompletions()) {
      SlotBook.Completion completion = slots.nextCompletion();
      BatchRef batch = completion.batch();
      if (completion.failure() == null) {
        BatchResult result = completion.result();
        if (result.outcome() != BatchOutcome.SKIPPED) {
          processedKeys += result.size();
        }
        processedKeys += result.chainedKeys();
        if (result.chainedBatches() > 0) {
          // The chain may have ended on its time, with batches still pending.
          mayHavePending = true;
        }
        if (result.handoff() != null) {
          handOff(result, completion.lane());
        }
      } else {
        String error = RunText.failure(completion.failure());
        log.warn("run {}: batch {} failed: {}", runId, batch.number(), error);
        runs.recordBatchFailure(new BatchFailure(runId, batch.number(), error));
      }
    }
    Workflow.setCurrentDetails(details());
  }

  /**
   * A chained batch failed its attempt and still holds the chain's slot: it goes on as a batch of
   * its own in that lane, with the attempts it has left, or fails now if it has none.
   */
  private void handOff(BatchResult result, int lane) {
    BatchRef batch = result.handoff();
    if (result.handoffPermanent() || settings.batchPolicy().maxAttempts() == 1) {
      log.warn("run {}: batch {} failed: {}", runId, batch.number(), result.handoffError());
      runs.recordBatchFailure(new BatchFailure(runId, batch.number(), result.handoffError()));
      return;
    }
    start(batch, slots.take(batch, lane), handoffOptions);
  }

  private int effectiveCap() {
    return CapPolicy.effective(settings.definitionCap(), requestedCap, settings.engineSafetyCap());
  }

  private boolean continueAsNewDue() {
    return batchesStartedHere >= settings.maxBatchesPerExecution()
        || Workflow.getInfo().isContinueAsNewSuggested();
  }

  private void continueAsNew() {
    // A retry Update waits for the loop's answer: applied here, then its handler finishes.
    do {
      Workflow.await(() -> retryRequested || Workflow.isEveryHandlerFinished());
      applyRequests();
    } while (!Workflow.isEveryHandlerFinished());
    RunCarryOver carry =
        new RunCarryOver(
            slots.cap(),
            paused,
            stopRequested,
            retryRequested,
            window.done(),
            totalKeys,
            processedKeys,
            startedAt == null ? null : startedAt.toEpochMilli(),
            claimSequence,
            null,
            null,
            null);
    log.info("run {}: continuing as new after {} batches", runId, batchesStartedHere);
    Workflow.continueAsNew(new RunWorkflowInput(runId, carry));
  }

  private void publishStatus() {
    Workflow.upsertTypedSearchAttributes(
        RunSearchAttributes.BACKFILL.valueSet(settings.backfill()),
        RunSearchAttributes.RUN_STATUS.valueSet(status.wire()));
    Workflow.setCurrentDetails(details());
  }

  private String details() {
    return RunText.details(
        status,
        currentProgress(),
        slots.held(),
        slots.cap(),
        window.error(),
        waitingForRetry ? retryDeadlineMillis : null);
  }

  private RunProgress currentProgress() {
    return RunProgress.of(
        status,
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        Instant.ofEpochMilli(Workflow.currentTimeMillis()));
  }

  /**
   * Whether a signal arrives while the run has ended and after a retry that may re-open it, not yet
   * handled: the signal then applies once that retry has re-opened the run.
   */
  private boolean afterPendingRetry() {
    return waitingForRetry && retryRequested;
  }

  @Override
  public void stop() {
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

  @Override
  public void retry() {
    retryRequested = true;
    woken = true;
  }

  @Override
  public void validateRetryRun(RetryRequest request) {
    rejectIfLate(request == null ? null : request.answerByMillis());
  }

  @Override
  public RetryAnswer retryRun(RetryRequest request) {
    CompletablePromise<RetryAnswer> answer = Workflow.newPromise();
    retryAnswers.add(answer);
    retry();
    return answer.get();
  }

  @Override
  public void validateChangeCap(CapUpdate update) {
    if (update == null || update.maxParallelBatches() < 1) {
      throw new IllegalArgumentException("maxParallelBatches must be at least 1");
    }
    rejectIfLate(update.answerByMillis());
  }

  /**
   * Applies and records the new cap before answering, so the record shows it once the caller has
   * the answer; a pending run's cap is recorded too, for when it starts.
   */
  @Override
  public CapAnswer changeCap(CapUpdate update) {
    Workflow.await(() -> window != null || settings != null && !settings.found());
    capLock.lock();
    try {
      if (!settings.found()) {
        return CapAnswer.gone();
      }
      Optional<String> refusal =
          RunControl.refusal(runId, RunControl.Request.CHANGE_CAP, status, false);
      if (refusal.isPresent() || waitingForRetry) {
        return CapAnswer.refused(
            refusal.orElse("run " + runId + " is " + status.wire() + "; its cap cannot change"));
      }
      requestedCap = update.maxParallelBatches();
      capChanged = false;
      slots.setCap(effectiveCap());
      runs.recordCap(new CapRecord(runId, requestedCap, slots.cap()));
      woken = true;
      window.lookSoon();
      Workflow.setCurrentDetails(details());
      return CapAnswer.changed(requestedCap, slots.cap());
    } finally {
      capLock.unlock();
    }
  }

  /** Rejects an Update its caller no longer waits for: applied now, it would be applied unseen. */
  private static void rejectIfLate(Long answerByMillis) {
    if (answerByMillis != null && Workflow.currentTimeMillis() > answerByMillis) {
      throw new IllegalStateException(
          "the request arrived after its caller stopped waiting ("
              + Instant.ofEpochMilli(answerByMillis)
              + "); nothing was changed");
    }
  }

  @Override
  public void pause() {
    if (!initialised || afterPendingRetry()) {
      earlyPause = true;
      return;
    }
    if (ignored(RunControl.Request.PAUSE, stopRequested)) {
      return;
    }
    paused = true;
    woken = true;
  }

  @Override
  public void resume() {
    if (!initialised || afterPendingRetry()) {
      earlyPause = false;
      return;
    }
    if (!paused) {
      log.info("run {}: resume ignored, the run is not paused", runId);
      return;
    }
    paused = false;
    woken = true;
  }

  @Override
  public void setMaxParallelBatches(CapChange change) {
    if (change == null || change.maxParallelBatches() < 1) {
      log.warn("run {}: cap change ignored, maxParallelBatches must be at least 1", runId);
      return;
    }
    if (afterPendingRetry()) {
      capAfterRetry = change.maxParallelBatches();
      return;
    }
    if (ignored(RunControl.Request.CHANGE_CAP, false)) {
      return;
    }
    requestedCap = change.maxParallelBatches();
    capChanged = true;
    woken = true;
  }

  /**
   * Whether the run refuses {@code request} now ({@link RunControl}); if so, says so in the log.
   */
  private boolean ignored(RunControl.Request request, boolean stopping) {
    Optional<String> refusal = RunControl.refusal(runId, request, status, stopping);
    refusal.ifPresent(reason -> log.info("{} ignored: {}", request, reason));
    return refusal.isPresent();
  }

  @Override
  public RunProgressView progress() {
    return new RunProgressView(runId, status, slots.held(), slots.cap(), currentProgress());
  }
}
