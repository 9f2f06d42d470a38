package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunEvent.Apply;
import dev.dripline.workflows.run.RunEvent.ApplyCap;
import dev.dripline.workflows.run.RunEvent.ApplyLater;
import dev.dripline.workflows.run.RunEvent.ApplyPause;
import dev.dripline.workflows.run.RunEvent.ApplyRetry;
import dev.dripline.workflows.run.RunEvent.BatchEnded;
import dev.dripline.workflows.run.RunEvent.Begin;
import dev.dripline.workflows.run.RunEvent.CapApplied;
import dev.dripline.workflows.run.RunEvent.CapSignal;
import dev.dripline.workflows.run.RunEvent.CapUpdate;
import dev.dripline.workflows.run.RunEvent.CapUpdated;
import dev.dripline.workflows.run.RunEvent.Claimed;
import dev.dripline.workflows.run.RunEvent.ClaimedFewer;
import dev.dripline.workflows.run.RunEvent.Continued;
import dev.dripline.workflows.run.RunEvent.ContinuedEnded;
import dev.dripline.workflows.run.RunEvent.Ended;
import dev.dripline.workflows.run.RunEvent.EndedAtFinish;
import dev.dripline.workflows.run.RunEvent.EndedRequeued;
import dev.dripline.workflows.run.RunEvent.EndedWaitBegins;
import dev.dripline.workflows.run.RunEvent.FillSlots;
import dev.dripline.workflows.run.RunEvent.Finished;
import dev.dripline.workflows.run.RunEvent.Finishing;
import dev.dripline.workflows.run.RunEvent.Fresh;
import dev.dripline.workflows.run.RunEvent.LiveAgain;
import dev.dripline.workflows.run.RunEvent.Loaded;
import dev.dripline.workflows.run.RunEvent.NewsSeen;
import dev.dripline.workflows.run.RunEvent.Pause;
import dev.dripline.workflows.run.RunEvent.PendingPauseAsked;
import dev.dripline.workflows.run.RunEvent.PendingRetryRefused;
import dev.dripline.workflows.run.RunEvent.Planned;
import dev.dripline.workflows.run.RunEvent.Ready;
import dev.dripline.workflows.run.RunEvent.RecordReopened;
import dev.dripline.workflows.run.RunEvent.Requeued;
import dev.dripline.workflows.run.RunEvent.Resume;
import dev.dripline.workflows.run.RunEvent.Retry;
import dev.dripline.workflows.run.RunEvent.RetryEnded;
import dev.dripline.workflows.run.RunEvent.Started;
import dev.dripline.workflows.run.RunEvent.Stop;
import dev.dripline.workflows.run.RunEvent.WaitOver;
import dev.dripline.workflows.run.RunEvent.Waited;
import java.util.List;

/**
 * The rules of a run's lifecycle as one pure function: {@link #on} takes the run's state and an
 * event and decides the next state and the commands the workflow carries out, in order. No clock,
 * no Temporal call: the workflow passes the time in the event. A rule whose later part must be
 * judged after an earlier part's commands were carried out continues in a {@link RunCommand.Then}
 * event.
 *
 * <p>{@link #on} is the one entry; the rules it applies are grouped by what they are about: what
 * operators ask and how the loop applies it ({@link RequestRules}), an execution's start ({@link
 * StartRules}), the loop's claims, slots and next move ({@link LoopRules}), planning ({@link
 * PlanRules}), the run's end ({@link EndRules}) and what the workflow does next in each phase of an
 * execution ({@link TurnRules}: the workflow only takes turns and carries out their commands). The
 * state holds all the rules judge: the slots ({@link Slots}), the planning window ({@link
 * PlanWindow}) and the run's progress and counters ({@link RunCounts}).
 *
 * <p>What stops a new batch is the set of the run's holds ({@link RunState#holds}): {@code paused},
 * {@code stopping} and those the last claim reported.
 */
final class RunTransitions {
  private RunTransitions() {}

  /**
   * What a transition decided.
   *
   * @param state the next state
   * @param commands what the workflow carries out, in order
   */
  record Step(RunState state, List<RunCommand> commands) {
    static Step to(RunState state, RunCommand... commands) {
      return new Step(state, List.of(commands));
    }

    static Step to(RunState state, List<RunCommand> commands) {
      return new Step(state, List.copyOf(commands));
    }
  }

  /** The next state and the commands to carry out when {@code event} happens in state {@code s}. */
  static Step on(RunState s, RunEvent event) {
    // Operators' requests.
    if (event instanceof Stop) {
      return RequestRules.stop(s);
    } else if (event instanceof Retry) {
      return RequestRules.retry(s);
    } else if (event instanceof Pause) {
      return RequestRules.pause(s);
    } else if (event instanceof Resume) {
      return RequestRules.resume(s);
    } else if (event instanceof CapSignal c) {
      return RequestRules.capSignal(s, c.maxParallelBatches());
    } else if (event instanceof CapUpdate c) {
      return RequestRules.capUpdate(s, c.maxParallelBatches());
    } else if (event instanceof CapUpdated c) {
      return RequestRules.capUpdated(s, c.requestedCap(), c.effectiveCap());
    }
    // The workflow's turns.
    if (event instanceof RunEvent.Turn t) {
      return TurnRules.turn(s, t.facts());
    } else if (event instanceof RunEvent.Woke w) {
      return TurnRules.woke(s, w.until(), w.news(), w.facts());
    } else if (event instanceof RunEvent.Enter) {
      return TurnRules.enter(s);
    } else if (event instanceof RunEvent.EnterEnded) {
      return TurnRules.enterEnded(s);
    } else if (event instanceof RunEvent.RetryOfEndedTaken) {
      return TurnRules.retryOfEndedTaken(s);
    } else if (event instanceof RunEvent.HandOverLook h) {
      return TurnRules.handOverIfDue(s, h.facts());
    } else if (event instanceof RunEvent.MarkedRunning m) {
      return TurnRules.markedRunning(s, m.start());
    } else if (event instanceof RunEvent.StoppedBeforeStart b) {
      return TurnRules.stoppedBeforeStart(s, b.finish());
    } else if (event instanceof RunEvent.EndedBeforeStart b) {
      return TurnRules.endedBeforeStart(s, b.recorded());
    } else if (event instanceof RunEvent.RecordRead r) {
      return TurnRules.recordRead(s, r.record());
    }
    // The start of an execution.
    if (event instanceof Begin b) {
      return StartRules.begin(s, b.runId(), b.carried());
    } else if (event instanceof Loaded l) {
      return StartRules.loaded(s, l.settings());
    } else if (event instanceof Fresh) {
      return StartRules.fresh(s);
    } else if (event instanceof LiveAgain) {
      return StartRules.liveAgain(s);
    } else if (event instanceof Continued c) {
      return StartRules.continued(s, c.carried());
    } else if (event instanceof ContinuedEnded c) {
      return StartRules.continuedEnded(s, c.carried());
    } else if (event instanceof Ready) {
      return StartRules.ready(s);
    } else if (event instanceof ApplyLater) {
      return RequestRules.applyLater(s);
    }
    // The loop.
    if (event instanceof Apply) {
      return RequestRules.applyStop(s);
    } else if (event instanceof ApplyRetry) {
      return RequestRules.applyRetry(s);
    } else if (event instanceof Requeued r) {
      return RequestRules.requeued(s, r.result(), r.before());
    } else if (event instanceof ApplyCap) {
      return RequestRules.applyCap(s);
    } else if (event instanceof CapApplied) {
      return RequestRules.capApplied(s);
    } else if (event instanceof ApplyPause) {
      return RequestRules.applyPause(s);
    } else if (event instanceof FillSlots f) {
      return LoopRules.fillSlots(s, f.facts());
    } else if (event instanceof Claimed c) {
      return LoopRules.claimed(s, c.claim(), c.asked());
    } else if (event instanceof ClaimedFewer c) {
      return LoopRules.claimedFewer(s, c.slotsFull());
    } else if (event instanceof BatchEnded b) {
      return LoopRules.batchEnded(s, b.batch(), b.result(), b.error());
    } else if (event instanceof Planned p) {
      return PlanRules.planned(s, p.page(), p.failure(), p.nowMillis());
    } else if (event instanceof RunEvent.PlanNext) {
      return PlanRules.planNext(s);
    } else if (event instanceof RunEvent.KeepAhead) {
      return PlanRules.keepAhead(s);
    } else if (event instanceof NewsSeen) {
      return LoopRules.newsSeen(s);
    } else if (event instanceof RunEvent.SlotsFullLookOver) {
      return LoopRules.slotsFullLookOver(s);
    } else if (event instanceof Waited) {
      return LoopRules.waited(s);
    } else if (event instanceof Finishing) {
      return LoopRules.finishing(s);
    }
    // A pending run.
    if (event instanceof PendingPauseAsked) {
      return StartRules.pendingPauseAsked(s);
    } else if (event instanceof PendingRetryRefused) {
      return StartRules.pendingRetryRefused(s);
    } else if (event instanceof Started st) {
      return StartRules.started(s, st.startedAt());
    }
    // The end.
    if (event instanceof Finished f) {
      return EndRules.finished(s, f.finish());
    } else if (event instanceof RunEvent.SlotsRecovered r) {
      return EndRules.slotsRecovered(s, r.recovered());
    } else if (event instanceof EndedAtFinish) {
      return EndRules.endedAtFinish(s);
    } else if (event instanceof Ended e) {
      return EndRules.ended(s, e.status(), e.finish());
    } else if (event instanceof EndedWaitBegins b) {
      return EndRules.endedWaitBegins(s, b.nowMillis());
    } else if (event instanceof RetryEnded) {
      return EndRules.retryEnded(s);
    } else if (event instanceof EndedRequeued r) {
      return EndRules.endedRequeued(s, r.result());
    } else if (event instanceof RecordReopened r) {
      return EndRules.recordReopened(s, r.record());
    } else if (event instanceof WaitOver w) {
      return EndRules.waitOver(s, w.reason());
    }
    throw new IllegalArgumentException("no rule for " + event);
  }

  /** What the loop does once it has applied requests and filled slots. */
  enum Move {
    /** Ask PostgreSQL to finish the run ({@link RunEvent.Finishing}). */
    FINISH,
    /** Continue as new: nothing is in flight and the execution is due to. */
    HAND_OVER,
    /** Wait for news: a completion, a plan page or a request. */
    WAIT
  }

  /**
   * The loop's next move once it has applied requests and filled slots ({@link LoopRules#next}).
   */
  static Move next(RunState s, RunEvent.Facts f) {
    return LoopRules.next(s, f);
  }

  /** How the loop waits for news ({@link LoopRules#waitFor}). */
  enum Wait {
    /** Until news, for at most the window's look; plans the next page if none came. */
    KEEP_AHEAD,
    /** Until news, for at most the look the claim that reported a hold asked for. */
    HELD,
    /**
     * Until news, for at most {@link BatchLanes#SLOTS_FULL_LOOK}; if none came and nothing of this
     * execution holds a slot, the slots held by no live holder are recovered.
     */
    SLOTS_FULL,
    /** Until news, however long. */
    NEWS
  }

  /** The workflow's outcome once its phase is over ({@link TurnRules#outcome}). */
  static RunOutcome outcome(RunState s) {
    return TurnRules.outcome(s);
  }

  /** Whether a wait for {@code until} is over ({@link TurnRules#woken}). */
  static boolean woken(RunCommand.Until until, RunState s, RunEvent.Facts f) {
    return TurnRules.woken(until, s, f);
  }

  /** How the loop waits for news now ({@link LoopRules#waitFor}). */
  static Wait waitFor(RunState s) {
    return LoopRules.waitFor(s);
  }
}
