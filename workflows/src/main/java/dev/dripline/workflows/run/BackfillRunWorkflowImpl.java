package dev.dripline.workflows.run;

/**
 * The run engine. It keeps its run as one immutable value ({@link RunState}: lifecycle, holds,
 * slots, planning window, counters and where the execution is), whose rules are one pure function
 * ({@link RunTransitions}); batches live in PostgreSQL. Signals and Updates become events that
 * {@link RunEngine} takes; the workflow method takes turns ({@link TurnRules}) — its start, a
 * pending run's wait for its start time, the loop, the hand-over at continue-as-new and an ended
 * run's wait for a retry — and only carries out the commands they return, until the run's work is
 * over.
 *
 * <p>The slots it holds ({@link Slots}, in its state) are the run's semaphore: an activity is
 * started only while fewer than the effective cap are held, and gives its slot back only once its
 * outcome is recorded, so the cap holds across retries and restarts. Planning runs ahead in the
 * background, a window of pending batches ahead. Continue-as-new happens only with no slot held and
 * no planning under way.
 */
public class BackfillRunWorkflowImpl implements BackfillRunWorkflow {
  private final RunLedger run = new RunLedger();
  private final RunEngine engine = new RunEngine(run);
  private final BatchLanes lanes = new BatchLanes(run, engine);

  @Override
  public RunOutcome run(RunWorkflowInput input) {
    engine.leaveToTheLoop(this::carryOut);
    engine.on(new RunEvent.Begin(input.runId(), input.carried()));
    while (run.state.phase() != RunPhase.OVER) {
      engine.on(new RunEvent.Turn(engine.facts()));
    }
    return RunTransitions.outcome(run.state);
  }

  /** Carries out a command of the loop's batches and planning (the engine carries out the rest). */
  private void carryOut(RunCommand command) {
    if (command instanceof RunCommand.StartBatch start) {
      lanes.start(start.batch(), start.lane());
    } else if (command instanceof RunCommand.StartPlanning p) {
      lanes.startPlanning(p.request());
    } else if (command instanceof RunCommand.AwaitNews) {
      lanes.awaitNews();
    } else if (command instanceof RunCommand.ConfigureActivities) {
      lanes.configure();
    } else {
      throw new IllegalArgumentException("no way to carry out " + command);
    }
  }

  @Override
  public void stop(SignalOrigin origin) {
    engine.signalled(new RunEvent.Stop(), origin, "run.stop", null);
  }

  @Override
  public void retry() {
    engine.signalled(new RunEvent.Retry(), null, "run.retry", null);
  }

  @Override
  public void validateRetryRun(RetryRequest request) {
    RunEngine.rejectIfLate(request == null ? null : request.answerByMillis());
  }

  @Override
  public RetryAnswer retryRun(RetryRequest request) {
    RetryAnswer answer = engine.retryAndAnswer();
    engine.updated(
        request == null ? null : request.origin(),
        "run.retry",
        null,
        answer.runGone() ? "the run no longer exists" : answer.refusal());
    return answer;
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
    CapAnswer answer = engine.changeCap(update.maxParallelBatches());
    engine.updated(
        update.origin(),
        "run.cap",
        "{\"maxParallelBatches\":" + update.maxParallelBatches() + "}",
        answer.runGone() ? "the run no longer exists" : answer.refusal());
    return answer;
  }

  @Override
  public void pause(SignalOrigin origin) {
    engine.signalled(new RunEvent.Pause(), origin, "run.pause", null);
  }

  @Override
  public void resume(SignalOrigin origin) {
    engine.signalled(new RunEvent.Resume(), origin, "run.resume", null);
  }

  @Override
  public void setMaxParallelBatches(CapChange change) {
    int cap = change == null ? 0 : change.maxParallelBatches();
    engine.signalled(
        new RunEvent.CapSignal(cap), null, "run.cap", "{\"maxParallelBatches\":" + cap + "}");
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
