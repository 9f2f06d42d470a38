package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunEvent.ApplyLater;
import dev.dripline.workflows.run.RunState.Later;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules of an execution's start (part of {@link RunTransitions}): the run's record loaded, a
 * fresh execution, one continued as new with what the one before it carried, and a pending run
 * waiting for its start time (R2, R9).
 */
final class StartRules {
  private StartRules() {}

  /**
   * The workflow method of an execution for run {@code runId} begins, with what the execution
   * before it carried over ({@code carried}; null if none): it reads its run's record first.
   */
  static Step begin(RunState s, long runId, RunCarryOver carried) {
    RunState.Edit e = s.edit();
    e.runId = runId;
    e.carried = carried;
    e.phase = RunPhase.LOADING;
    return Step.to(e.done());
  }

  /** The run's record as loaded; a cap signalled while it loaded wins over the recorded one. */
  static Step loaded(RunState s, RunSettings settings) {
    RunState.Edit e = s.edit();
    e.settings = settings;
    if (!settings.found()) {
      return Step.to(e.done());
    }
    if (!s.capUnrecorded()) {
      e.requestedCap = settings.requestedCap();
    }
    e.counts = s.counts().loaded(settings);
    e.window =
        PlanWindow.of(settings.planPageBatches(), settings.chainMillis(), settings.planningDone());
    RunState next = e.done();
    return Step.to(next.countedAgainst(next.effectiveCap()));
  }

  /** A run paused before it started (R9) waits, in a new execution too, as the first one did. */
  /**
   * A paused run whose failure budget is spent (P6b) paused itself for it: a new execution keeps
   * that hold, so that a retry goes on with the run as it would have in the execution that paused.
   */
  private static void holdSpentBudget(RunState.Edit e, boolean paused, RunSettings settings) {
    if (paused && settings.failureBudgetSpent()) {
      e.holds.add(RunState.FAILURE_BUDGET);
    }
  }

  static Step fresh(RunState s) {
    RunState.Edit e = s.edit();
    e.status = s.settings().status();
    if (e.status == RunStatus.PAUSED && s.settings().startedAt() == null) {
      e.hold(RunState.PAUSED, true).recorded(RunState.PAUSED, true);
    }
    return Step.to(e.done());
  }

  /**
   * A new execution of a live run (revived by a retry, or after a terminated execution) goes on as
   * its record says; the execution that took its stop is gone, and its record remembers it.
   */
  static Step liveAgain(RunState s) {
    RunState.Edit e = s.edit();
    boolean paused = s.status() == RunStatus.PAUSED;
    e.hold(RunState.PAUSED, paused).recorded(RunState.PAUSED, paused);
    holdSpentBudget(e, paused, s.settings());
    if (s.settings().stopRequested()) {
      e.hold(RunState.STOPPING, true);
    }
    return Step.to(e.done());
  }

  /** An execution continued as new takes over the pause, stop and retry carried to it. */
  static Step continued(RunState s, RunCarryOver carried) {
    List<RunCommand> commands = new ArrayList<>();
    RunState.Edit e = s.edit();
    e.counts = s.counts().carried(carried);
    e.window = s.window().withDone(carried.planningDone());
    // The cap of the load stands: the record's requested cap (kept current by every cap change,
    // recorded before the hand-over) or one signalled before the load, bounded by the definition's
    // and the engine's caps as deployed now.
    boolean paused = carried.paused();
    e.hold(RunState.PAUSED, paused).recorded(RunState.PAUSED, paused);
    holdSpentBudget(e, paused, s.settings());
    RunStatus recorded = s.settings().status();
    boolean recordedPaused = recorded == RunStatus.PAUSED;
    if (carried.endedStatus() == null
        && (recordedPaused || recorded == RunStatus.RUNNING)
        && recordedPaused != paused) {
      // A status write was lost at the hand-over; the workflow, the record's one writer, records
      // the pause it carries (the loop's first apply).
      commands.add(
          new Log(
              "run "
                  + s.runId()
                  + ": record says "
                  + recorded
                  + ", the workflow carried pause="
                  + paused));
      e.recorded(RunState.PAUSED, recordedPaused);
    }
    // A stop or retry may have been taken already, delivered before this execution loaded the run
    // (at the continue-as-new boundary, or while loadRun waited for the database). The record's
    // stop counts for a live run only: a stopped run's record keeps it until a retry.
    if (carried.stopRequested()
        || (carried.endedStatus() == null && s.settings().stopRequested())) {
      e.hold(RunState.STOPPING, true);
    }
    e.retryAsked |= carried.retryRequested();
    e.status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
    return Step.to(e.done(), commands);
  }

  /**
   * The execution that follows one whose ended run waited for a retry: it waits on, unless the run
   * was re-opened in its record meanwhile (a retry recorded by the API whose signal never reached
   * the workflow). Requests received before the load apply only after a retry received with them.
   */
  static Step continuedEnded(RunState s, RunCarryOver carried) {
    RunState.Edit e = s.edit();
    e.status = carried.endedStatus();
    e.retryDeadlineMillis = carried.retryDeadlineMillis();
    e.counts =
        s.counts()
            .withFinishedAt(
                carried.endedAtMillis() == null
                    ? null
                    : Instant.ofEpochMilli(carried.endedAtMillis()));
    e.hold(RunState.PAUSED, false).recorded(RunState.PAUSED, false);
    e.pauseToggled = false;
    Integer capAfterRetry = s.later().cap();
    List<RunCommand> commands = new ArrayList<>();
    if (s.capUnrecorded()) {
      capAfterRetry = s.retryAsked() ? s.requestedCap() : null;
      e.capUnrecorded = false;
      e.requestedCap = s.settings().requestedCap();
      e.slots = s.slots().withCap(e.done().effectiveCap());
    }
    e.later = new Later(s.later().pause(), s.stopping() && s.retryAsked(), capAfterRetry);
    e.statusKnown = true;
    commands.add(new PublishStatus());
    if (s.settings().status().isActive()) {
      commands.add(new Log("run " + s.runId() + " was re-opened in its record; it goes on"));
      e.later =
          new Later(e.later.pause(), e.later.stop() || s.settings().stopRequested(), e.later.cap());
      commands.addAll(EndRules.revive(e, s.settings().status()));
    }
    return Step.to(e.done(), commands);
  }

  /**
   * The run's status is known and the loop begins: a pause or resume kept for later applies (its
   * change asked before the status is published), then the status is published.
   */
  static Step ready(RunState s) {
    RunState.Edit e = s.edit();
    e.statusKnown = true;
    e.loopBegun = true;
    e.phase = RunPhase.LIVE;
    return Step.to(e.done(), new Then(new ApplyLater()), new PublishStatus());
  }

  /**
   * Takes the last pause or resume asked while the run is pending (kept until the run is under
   * way): a pause is recorded {@code paused} at once, a resume {@code pending} again (the run
   * starts at its start time, or now if that has passed).
   */
  static Step pendingPauseAsked(RunState s) {
    Boolean asked = s.later().pause();
    if (asked == null) {
      return Step.to(s);
    }
    RunState.Edit e = s.edit();
    e.later = new Later(null, s.later().stop(), s.later().cap());
    if (asked == s.paused()) {
      return Step.to(e.done());
    }
    e.hold(RunState.PAUSED, asked).recorded(RunState.PAUSED, asked);
    e.status = asked ? RunStatus.PAUSED : RunStatus.PENDING;
    return Step.to(
        e.done(),
        new Log("run " + s.runId() + " is " + e.status.wire() + " before its start"),
        new RecordStatus(e.status),
        new PublishStatus());
  }

  /** A retry of a pending run is refused: it has no batches yet. */
  static Step pendingRetryRefused(RunState s) {
    RunState.Edit e = s.edit();
    e.retryAsked = false;
    return Step.to(
        e.done(),
        new AnswerRetries(
            RetryAnswer.refused(RunControl.nothingToRequeue(s.runId(), RunStatus.PENDING))));
  }

  /** A pending run started: its record moved to running. */
  static Step started(RunState s, Instant startedAt) {
    RunState.Edit e = s.edit();
    e.status = RunStatus.RUNNING;
    e.counts = s.counts().withStartedAt(startedAt);
    return Step.to(e.done());
  }
}
