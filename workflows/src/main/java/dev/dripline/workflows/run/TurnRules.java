package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Await;
import dev.dripline.workflows.run.RunCommand.AwaitNews;
import dev.dripline.workflows.run.RunCommand.AwaitRetry;
import dev.dripline.workflows.run.RunCommand.ConfigureActivities;
import dev.dripline.workflows.run.RunCommand.ContinueAsNew;
import dev.dripline.workflows.run.RunCommand.Fill;
import dev.dripline.workflows.run.RunCommand.LoadRecord;
import dev.dripline.workflows.run.RunCommand.LoadRun;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.MarkRunning;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecoverOrphanSlots;
import dev.dripline.workflows.run.RunCommand.StopBeforeStart;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.Until;
import dev.dripline.workflows.run.RunEvent.Facts;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules of the workflow's turns (part of {@link RunTransitions}): what an execution does next
 * in each {@link RunPhase} — its start, a pending run's wait for its start time (R2, R9), the loop,
 * the hand-over at continue-as-new, an ended run's wait for a retry, and its end — and where it
 * goes from there. The workflow takes a {@link RunEvent.Turn} until the phase is {@link
 * RunPhase#OVER}, and carries out what each returns: every wait, read, write and continue-as-new of
 * the execution is a command of these rules.
 */
final class TurnRules {
  private TurnRules() {}

  /**
   * How often an ended run's workflow looks at the run's record while it waits for a retry: a
   * deleted run ends it, and a run re-opened in its record (by a build from before the workflow was
   * its run's only writer) goes on.
   */
  static final Duration ENDED_RUN_LOOK = Duration.ofMinutes(10);

  /** Wake-ups of an ended run's workflow per execution before it continues as new. */
  static final int MAX_WAKES_WHILE_ENDED = 100;

  /** The workflow's next turn in its phase, with what it knows now. */
  static Step turn(RunState s, Facts f) {
    return switch (s.phase()) {
      case LOADING -> Step.to(s.in(RunPhase.OPENING), new LoadRun());
      case OPENING -> open(s);
      case PENDING -> pending(s);
      case PENDING_LOOK -> pendingLook(s, f);
      case LIVE ->
          Step.to(
              s.in(RunPhase.LIVE_NEXT),
              new Then(new RunEvent.NewsSeen()),
              new Then(new RunEvent.Apply()),
              new Fill(),
              new Then(new RunEvent.KeepAhead()),
              new PublishDetails());
      case LIVE_NEXT -> liveNext(s, f);
      case HANDING_OVER -> Step.to(s.in(RunPhase.HANDING_OVER_LOOK), new Await(Until.HANDLERS, 0));
      case HANDING_OVER_LOOK -> handOverLook(s, f);
      case ENDED ->
          s.retryAsked()
              ? Step.to(
                  s.in(RunPhase.ENDED_LOOK),
                  new Then(new RunEvent.RetryEnded()),
                  new Then(new RunEvent.RetryOfEndedTaken()))
              : endedLook(s, f);
      case ENDED_LOOK -> endedLook(s, f);
      case DONE -> Step.to(s, new AnswerRetries(endingAnswer(s)), new Await(Until.LAST_ANSWERS, 0));
      case OVER -> Step.to(s);
    };
  }

  /**
   * The record is read. Gone, the workflow ends; otherwise the execution takes over what the one
   * before it carried, or the status it loaded, and goes on from there.
   */
  private static Step open(RunState s) {
    if (!s.found()) {
      return Step.to(
          s.in(RunPhase.DONE), new Log("run " + s.runId() + " no longer exists; nothing to do"));
    }
    List<RunCommand> commands = new ArrayList<>();
    commands.add(new ConfigureActivities());
    RunCarryOver carried = s.carried();
    if (carried == null) {
      commands.add(new Then(new RunEvent.Fresh()));
      commands.add(new Then(new RunEvent.Enter()));
    } else {
      commands.add(new Then(new RunEvent.Continued(carried)));
      commands.add(
          new Then(
              carried.endedStatus() == null
                  ? new RunEvent.Ready()
                  : new RunEvent.ContinuedEnded(carried)));
      if (carried.endedStatus() != null) {
        commands.add(new Then(new RunEvent.EnterEnded()));
      }
    }
    return Step.to(s, commands);
  }

  /**
   * A fresh execution goes where the status it loaded says: a pending run (or one paused before it
   * started) to its start; an ended run completes its workflow, unless a retry that started it is
   * applied first; a live run's slots held by no live holder are recovered, and the loop begins.
   */
  static Step enter(RunState s) {
    if (s.status() == RunStatus.PENDING || (s.paused() && s.settings().startedAt() == null)) {
      return Step.to(s.in(RunPhase.PENDING), new PublishStatus());
    }
    if (s.status().isTerminal()) {
      if (!s.retryAsked()) {
        return Step.to(s.in(RunPhase.DONE));
      }
      return Step.to(
          s, new Then(new RunEvent.RetryEnded()), new Then(new RunEvent.RetryOfEndedTaken()));
    }
    // A new execution of a live run: revived by a retry, or after a terminated execution.
    return Step.to(
        s,
        new RecoverOrphanSlots(),
        new Then(new RunEvent.LiveAgain()),
        new Then(new RunEvent.Ready()));
  }

  /** An execution continued while its run had ended waits on, unless its record re-opened it. */
  static Step enterEnded(RunState s) {
    return s.status().isActive()
        ? Step.to(s, new Then(new RunEvent.Ready()))
        : Step.to(s, new AwaitRetry());
  }

  /**
   * A retry of an ended run was applied: re-opened, the run goes on; gone, or with nothing to
   * re-queue, the workflow completes — unless it waits for a retry, when the wait goes on.
   */
  static Step retryOfEndedTaken(RunState s) {
    if (s.waitingForRetry()) {
      return Step.to(s);
    }
    return s.status() != null && s.status().isActive() ? goOn(s) : Step.to(s.in(RunPhase.DONE));
  }

  /** The run goes on after a wait: into the loop, which begins first if it had not. */
  private static Step goOn(RunState s) {
    return s.loopBegun()
        ? Step.to(s.in(RunPhase.LIVE))
        : Step.to(s, new Then(new RunEvent.Ready()));
  }

  /**
   * A pending run's wait for its start, at its top: a stop ends the run before it started;
   * otherwise a pause or resume asked meanwhile is taken, and the run looks at the time.
   */
  private static Step pending(RunState s) {
    if (s.stopping()) {
      return Step.to(s, new StopBeforeStart());
    }
    return Step.to(s.in(RunPhase.PENDING_LOOK), new Then(new RunEvent.PendingPauseAsked()));
  }

  /**
   * A pending run at its start time and not paused starts (or, stopped meanwhile, ends); otherwise
   * it waits until its start time, a stop, a retry Update to answer, or a pause or resume.
   */
  private static Step pendingLook(RunState s, Facts f) {
    long waitMillis =
        s.settings().startAt() == null ? 0 : s.settings().startAt().toEpochMilli() - f.nowMillis();
    if (waitMillis <= 0 && !s.paused()) {
      return Step.to(s, s.stopping() ? new StopBeforeStart() : new MarkRunning());
    }
    return Step.to(s.in(RunPhase.PENDING), new Await(Until.START, Math.max(0, waitMillis)));
  }

  /**
   * The pending run's mark as running answered: started, the loop begins; found ended, its workflow
   * completes or waits for a retry.
   */
  static Step markedRunning(RunState s, StartResult start) {
    if (start.started()) {
      return Step.to(
          s, new Then(new RunEvent.Started(start.startedAt())), new Then(new RunEvent.Ready()));
    }
    boolean waits = start.status() != null && EndRules.waitsForRetry(s, start.status());
    Log log = new Log("run " + s.runId() + " did not start: it is " + start.status());
    if (!waits) {
      RunState.Edit e = s.edit();
      e.status = start.status();
      e.phase = RunPhase.DONE;
      return Step.to(e.done(), log);
    }
    return Step.to(s, log, new Then(new RunEvent.Ended(start.status(), null)), new AwaitRetry());
  }

  /** A pending run stopped before it started: it ends as {@code finish} recorded it. */
  static Step stoppedBeforeStart(RunState s, FinishResult finish) {
    return Step.to(
        s,
        new Then(
            new RunEvent.Ended(
                finish.status() == null ? RunStatus.STOPPED : finish.status(), finish)),
        new Then(new RunEvent.EndedBeforeStart(finish.status() != null)));
  }

  /** A run stopped before it started waits for a retry, or its workflow completes. */
  static Step endedBeforeStart(RunState s, boolean recorded) {
    if (!recorded) {
      return Step.to(s.in(RunPhase.DONE));
    }
    return EndRules.waitsForRetry(s, s.status())
        ? Step.to(s, new AwaitRetry())
        : Step.to(s.in(RunPhase.DONE));
  }

  /**
   * The loop's next move, once it has applied requests and filled slots ({@link LoopRules#next}):
   * finish the run, continue as new, or wait for news.
   */
  private static Step liveNext(RunState s, Facts f) {
    return switch (LoopRules.next(s, f)) {
      case FINISH -> Step.to(s.in(RunPhase.LIVE), new Then(new RunEvent.Finishing()));
      case HAND_OVER -> Step.to(s.in(RunPhase.HANDING_OVER));
      case WAIT -> Step.to(s.in(RunPhase.LIVE), new AwaitNews());
    };
  }

  /** After a refused finish: the execution continues as new if it is due to. */
  static Step handOverIfDue(RunState s, Facts f) {
    return s.continueAsNewDue(f.continueAsNewSuggested())
        ? Step.to(s.in(RunPhase.HANDING_OVER))
        : Step.to(s);
  }

  /**
   * Before the hand-over, requests were applied: the execution hands over once every handler has
   * finished — a retry Update waits for the loop's answer — and the pause it holds is recorded (a
   * pause or resume handled while the requests were applied is recorded too, not only carried).
   */
  private static Step handOverLook(RunState s, Facts f) {
    if (!f.everyHandlerFinished()) {
      return Step.to(s.in(RunPhase.HANDING_OVER));
    }
    if (RequestRules.pauseUnrecorded(s)) {
      return Step.to(s.in(RunPhase.HANDING_OVER));
    }
    return Step.to(
        s,
        new Log(
            "run "
                + s.runId()
                + ": continuing as new after "
                + s.counts().batchesStartedHere()
                + " batches"),
        new ContinueAsNew(s.carryOver(s.paused(), s.stopping(), s.retryAsked(), null)));
  }

  /**
   * An ended run waits for a retry until its window passes, continuing as new after {@link
   * #MAX_WAKES_WHILE_ENDED} wake-ups or when Temporal suggests it; every {@link #ENDED_RUN_LOOK} it
   * reads its record.
   */
  private static Step endedLook(RunState s, Facts f) {
    long left = s.retryDeadlineMillis() - f.nowMillis();
    if (left <= 0) {
      return Step.to(
          s.in(RunPhase.DONE),
          new Then(
              new RunEvent.WaitOver(
                  "run " + s.runId() + ": no retry within its window; its workflow completes")));
    }
    RunState next = s.in(RunPhase.ENDED);
    if (s.wakesWhileEnded() >= MAX_WAKES_WHILE_ENDED || f.continueAsNewSuggested()) {
      return Step.to(next, new Await(Until.HANDLERS_WHILE_ENDED, 0));
    }
    return Step.to(next, new Await(Until.RETRY, Math.min(left, ENDED_RUN_LOOK.toMillis())));
  }

  /** Whether a wait for {@code until} is over. */
  static boolean woken(Until until, RunState s, Facts f) {
    return switch (until) {
      case START -> s.stopping() || f.retryAnswersOwed() || s.later().pause() != null;
      case HANDLERS, HANDLERS_WHILE_ENDED -> s.retryAsked() || f.everyHandlerFinished();
      case RETRY -> s.retryAsked();
      case LAST_ANSWERS -> f.retryAnswersOwed() || f.everyHandlerFinished();
    };
  }

  /**
   * A wait for {@code until} is over ({@code news}: its condition came true). A pending run refuses
   * a retry Update (it has no batches yet); before a live run's hand-over, requests are applied;
   * before an ended run's, a retry goes first, else the execution continues as new (history stays
   * small); an ended run that woke with no retry reads its record; at the end, the workflow ends
   * once no retry waits for an answer and every handler has finished.
   */
  static Step woke(RunState s, Until until, boolean news, Facts f) {
    return switch (until) {
      case START ->
          f.retryAnswersOwed()
              ? Step.to(s, new Then(new RunEvent.PendingRetryRefused()))
              : Step.to(s);
      case HANDLERS -> Step.to(s, new Then(new RunEvent.Apply()));
      case HANDLERS_WHILE_ENDED ->
          s.retryAsked()
              ? Step.to(s)
              : Step.to(
                  s,
                  new Log("run " + s.runId() + ": continuing as new while it waits for a retry"),
                  new ContinueAsNew(s.carryOver(false, false, false, s.status())));
      case RETRY -> {
        RunState.Edit e = s.edit();
        e.wakesWhileEnded = s.wakesWhileEnded() + 1;
        yield news ? Step.to(e.done()) : Step.to(e.done(), new LoadRecord());
      }
      case LAST_ANSWERS ->
          f.retryAnswersOwed() || !f.everyHandlerFinished()
              ? Step.to(s)
              : Step.to(s.in(RunPhase.OVER));
    };
  }

  /**
   * The ended run's record as it is now: deleted, the workflow ends; re-opened (a retry the API
   * recorded but could not signal), the run goes on.
   */
  static Step recordRead(RunState s, RunSettings record) {
    if (!record.found()) {
      return Step.to(
          s.in(RunPhase.DONE),
          new Then(
              new RunEvent.WaitOver("run " + s.runId() + " no longer exists; its workflow ends")));
    }
    if (!record.status().isActive()) {
      return Step.to(s);
    }
    Step goOn = goOn(s);
    List<RunCommand> commands = new ArrayList<>();
    commands.add(new Then(new RunEvent.RecordReopened(record)));
    commands.addAll(goOn.commands());
    return Step.to(goOn.state(), commands);
  }

  /** What a retry asked as the workflow ends is answered. */
  static RetryAnswer endingAnswer(RunState s) {
    if (s.settings() != null && !s.settings().found()) {
      return RetryAnswer.gone();
    }
    return RetryAnswer.refused(
        s.status() == RunStatus.COMPLETED
            ? RunControl.nothingToRequeue(s.runId(), s.status())
            : "the workflow of run " + s.runId() + " was ending; try again");
  }

  /** The workflow's outcome: the run's status (none if it is gone) and the keys it processed. */
  static RunOutcome outcome(RunState s) {
    return new RunOutcome(s.found() ? s.status() : null, s.counts().processedKeys());
  }
}
