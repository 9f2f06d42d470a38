package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_RECONCILED;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_OF_ENDED_RUN;

import io.temporal.workflow.Workflow;
import org.slf4j.Logger;

/**
 * The run engine. It keeps its run as one immutable value ({@link RunState}: lifecycle, holds,
 * slots, planning window and counters), whose rules are one pure function ({@link RunTransitions});
 * batches live in PostgreSQL. Signals and Updates become events that {@link RunEngine} takes; the
 * loop applies what operators asked, fills free slots and takes outcomes ({@link BatchLanes}), and
 * finishes the run when nothing is left; a run that ended failed or stopped then waits for a retry
 * ({@link EndedRunWait}).
 *
 * <p>The slots it holds ({@link Slots}, in its state) are the run's semaphore: an activity is
 * started only while fewer than the effective cap are held, and gives its slot back only once its
 * outcome is recorded, so the cap holds across retries and restarts. Planning runs ahead in the
 * background, a window of pending batches ahead. Continue-as-new happens only with no slot held and
 * no planning under way.
 */
public class BackfillRunWorkflowImpl implements BackfillRunWorkflow {
  private static final Logger log = Workflow.getLogger(BackfillRunWorkflowImpl.class);

  private final RunLedger run = new RunLedger();
  private final RunEngine engine = new RunEngine(run);
  private final BatchLanes lanes = new BatchLanes(run, engine);
  private final EndedRunWait ended = new EndedRunWait(run, engine);
  private final RunStart start = new RunStart(run, engine, ended);

  /** The loop's work is done: the workflow completes with the run's outcome. */
  private boolean completed;

  @Override
  public RunOutcome run(RunWorkflowInput input) {
    RunOutcome outcome = drive(input);
    // A retry asked as the run's workflow ends — also while it waits here for its handlers — is
    // refused, never left unanswered.
    RetryAnswer ending =
        run.settings() != null && !run.settings().found()
            ? RetryAnswer.gone()
            : RetryAnswer.refused(
                run.status() == RunStatus.COMPLETED
                    ? RunControl.nothingToRequeue(run.runId(), run.status())
                    : "the workflow of run " + run.runId() + " was ending; try again");
    do {
      engine.answerRetries(ending);
      Workflow.await(() -> engine.retryAnswersOwed() || Workflow.isEveryHandlerFinished());
    } while (engine.retryAnswersOwed() || !Workflow.isEveryHandlerFinished());
    return outcome;
  }

  private RunOutcome drive(RunWorkflowInput input) {
    engine.on(new RunEvent.Begin(input.runId()));
    engine.on(new RunEvent.Loaded(run.runs.loadRun(run.ref())));
    RunSettings settings = run.settings();
    if (!settings.found()) {
      log.info("run {} no longer exists; nothing to do", run.runId());
      return new RunOutcome(null, 0);
    }
    lanes.configure();
    RunCarryOver carried = input.carried();
    if (carried != null) {
      engine.on(new RunEvent.Continued(carried));
      if (carried.endedStatus() != null) {
        engine.on(new RunEvent.ContinuedEnded(carried));
        if (!run.status().isActive() && !ended.await()) {
          return outcome();
        }
      }
    } else {
      engine.on(new RunEvent.Fresh());
      RunState state = run.state;
      if (state.status() == RunStatus.PENDING || state.paused() && settings.startedAt() == null) {
        RunOutcome notStarted = start.await();
        if (notStarted != null) {
          return notStarted;
        }
      } else if (state.status().isTerminal()) {
        if (!state.retryAsked() || !engine.has(RETRY_OF_ENDED_RUN) || !retriedAfterEnd()) {
          return outcome();
        }
      } else {
        // A new execution of a live run: revived by a retry, or after a terminated execution.
        run.runs.recoverSlots(run.ref());
        engine.on(new RunEvent.LiveAgain());
      }
    }
    engine.on(new RunEvent.Ready());
    return loop();
  }

  /** A fresh execution of an ended run, started for a retry: true if the retry re-opened it. */
  private boolean retriedAfterEnd() {
    engine.on(new RunEvent.RetryEnded());
    return run.status().isActive();
  }

  private RunOutcome loop() {
    engine.leaveToTheLoop(this::carryOut);
    while (true) {
      engine.on(new RunEvent.NewsSeen());
      engine.on(new RunEvent.Apply());
      lanes.startBatches();
      run.publishDetails();
      switch (RunTransitions.next(run.state, run.facts())) {
        case FINISH -> {
          engine.on(new RunEvent.Finishing());
          if (completed) {
            return outcome();
          }
          continue;
        }
        case HAND_OVER -> continueAsNew();
        case WAIT -> {}
      }
      lanes.awaitNews();
    }
  }

  /** Carries out a command of the loop (the engine carries out the others). */
  private void carryOut(RunCommand command) {
    if (command instanceof RunCommand.StartBatch start) {
      lanes.start(start.batch(), start.lane());
    } else if (command instanceof RunCommand.StartPlanning p) {
      lanes.startPlanning(p.request());
    } else if (command instanceof RunCommand.Complete) {
      completed = true;
    } else if (command instanceof RunCommand.AwaitRetry) {
      completed = !ended.await();
    } else if (command instanceof RunCommand.HandOverIfDue) {
      if (run.continueAsNewDue()) {
        continueAsNew();
      }
    } else {
      throw new IllegalArgumentException("no way to carry out " + command);
    }
  }

  private void continueAsNew() {
    // A retry Update waits for the loop's answer: applied here, then its handler finishes. A pause
    // or resume handled while this applies is recorded too, not only carried.
    do {
      Workflow.await(() -> run.state.retryAsked() || Workflow.isEveryHandlerFinished());
      engine.on(new RunEvent.Apply());
    } while (!Workflow.isEveryHandlerFinished()
        || engine.pauseUnrecorded() && engine.has(PAUSE_RECONCILED));
    RunState state = run.state;
    RunCarryOver carry = run.carryOver(state.paused(), state.stopping(), state.retryAsked(), null);
    log.info(
        "run {}: continuing as new after {} batches",
        run.runId(),
        state.counts().batchesStartedHere());
    Workflow.continueAsNew(new RunWorkflowInput(run.runId(), carry));
  }

  private RunOutcome outcome() {
    return new RunOutcome(run.status(), run.state.counts().processedKeys());
  }

  @Override
  public void stop() {
    engine.on(new RunEvent.Stop());
  }

  @Override
  public void retry() {
    engine.on(new RunEvent.Retry());
  }

  @Override
  public void validateRetryRun(RetryRequest request) {
    RunEngine.rejectIfLate(request == null ? null : request.answerByMillis());
  }

  @Override
  public RetryAnswer retryRun(RetryRequest request) {
    return engine.retryAndAnswer();
  }

  @Override
  public void validateChangeCap(CapUpdate update) {
    if (update == null || update.maxParallelBatches() < 1) {
      throw new IllegalArgumentException("maxParallelBatches must be at least 1");
    }
    RunEngine.rejectIfLate(update.answerByMillis());
  }

  @Override
  public CapAnswer changeCap(CapUpdate update) {
    return engine.changeCap(update.maxParallelBatches());
  }

  @Override
  public void pause() {
    engine.on(new RunEvent.Pause());
  }

  @Override
  public void resume() {
    engine.on(new RunEvent.Resume());
  }

  @Override
  public void setMaxParallelBatches(CapChange change) {
    engine.on(new RunEvent.CapSignal(change == null ? 0 : change.maxParallelBatches()));
  }

  @Override
  public RunProgressView progress() {
    return new RunProgressView(
        run.runId(),
        run.status(),
        run.state.slots().held(),
        run.state.slots().cap(),
        run.progress());
  }
}
