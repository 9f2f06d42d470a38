package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.Claim;
import dev.dripline.workflows.run.RunCommand.Fill;
import dev.dripline.workflows.run.RunCommand.Finish;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PlanNextPage;
import dev.dripline.workflows.run.RunCommand.RecordBatchFailure;
import dev.dripline.workflows.run.RunCommand.StartBatch;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.Warn;
import dev.dripline.workflows.run.RunEvent.ClaimedFewer;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules of the workflow's loop (part of {@link RunTransitions}): which batches to claim, what a
 * claim's answer means — holds included — and what the loop does next.
 */
final class LoopRules {
  private LoopRules() {}

  /**
   * The loop fills free slots while nothing of the run's own holds it and the execution is not due
   * to continue as new: it claims pending batches, or plans the next page when none may be left.
   */
  static Step fillSlots(RunState s, RunEvent.Facts f) {
    if (s.stopping()
        || s.paused()
        || s.continueAsNewDue(f.continueAsNewSuggested())
        || s.slots().free() <= 0) {
      return Step.to(s);
    }
    if (!s.counts().mayHavePending()) {
      return Step.to(s, new PlanNextPage());
    }
    long token = s.counts().claimSequence();
    return Step.to(s.with(s.counts().claimTaken()), new Claim(s.slots().free(), token));
  }

  /**
   * A claim's answer. What holds the run besides its own holds is what the claim reported; while
   * held, no batch starts (those in flight go on) and the loop claims again after the claim's look.
   * Otherwise the batches claimed start, and the loop claims again while slots are free.
   *
   * <p>A run whose failed batches are beyond its failure budget ({@link RunState#FAILURE_BUDGET},
   * P6b) pauses itself, as an operator's pause would: recorded {@code paused} by the loop's next
   * apply, until resumed.
   */
  static Step claimed(RunState s, ClaimResult claim, int asked) {
    RunState.Edit e = s.edit();
    e.counts = s.counts().heldTime(claim);
    e.holds.removeIf(h -> !h.equals(RunState.PAUSED) && !h.equals(RunState.STOPPING));
    if (claim.holds() != null) {
      e.holds.addAll(claim.holds());
    }
    List<RunCommand> commands = new ArrayList<>();
    if (e.holds.contains(RunState.FAILURE_BUDGET) && !s.paused() && !s.stopping()) {
      e.hold(RunState.PAUSED, true);
      e.pauseToggled = true;
      e.news = true;
      commands.add(
          new Log(
              "run "
                  + s.runId()
                  + " pauses itself: its failed batches are beyond its failure budget"));
    }
    if (claim.held()) {
      e.heldLookMillis = Math.max(1, claim.lookAgainMillis());
      return Step.to(e.done(), commands);
    }
    for (BatchRef batch : claim.batches()) {
      int lane = e.slots.lowestFreeLane();
      e.slots = e.slots.take(batch, lane);
      e.counts = e.counts.batchStarted();
      commands.add(new StartBatch(batch, lane));
    }
    commands.add(
        claim.batches().size() < asked
            ? new Then(new ClaimedFewer(claim.slotsFull()))
            : new Fill());
    return Step.to(e.done(), commands);
  }

  /**
   * A claim took fewer batches than asked: the run's slots are full in PostgreSQL (held by batches
   * this execution does not hold), and the loop claims again after a look; or no pending batch is
   * left, and the loop plans.
   */
  static Step claimedFewer(RunState s, boolean slotsFull) {
    if (slotsFull) {
      RunState.Edit e = s.edit();
      e.slotsFull = true;
      return Step.to(e.done());
    }
    return Step.to(s.with(s.counts().withMayHavePending(false)), new Fill());
  }

  /**
   * A batch activity's outcome: its slot is free from now on; its keys (and its chain's) are
   * counted; a chained batch whose attempt failed and still holds the chain's slot goes on as a
   * batch of its own in that lane, with the attempts it has left (counted in PostgreSQL), or fails
   * now if it has none; an activity that failed for good fails its batch.
   */
  static Step batchEnded(RunState s, BatchRef batch, BatchResult result, String error) {
    int lane = s.slots().laneOf(batch.number());
    RunState.Edit e = s.edit();
    e.slots = s.slots().release(batch.number());
    e.counts = s.counts().withFruitlessFinishes(0);
    if (error != null) {
      return Step.to(
          e.done(), failed(s, batch, error), new RecordBatchFailure(batch.number(), error));
    }
    List<RunCommand> commands = new ArrayList<>();
    long keys =
        (result.outcome() != BatchOutcome.SKIPPED ? result.size() : 0) + result.chainedKeys();
    e.counts = e.counts.counted(keys);
    if (result.chainedBatches() > 0) {
      // The chain may have ended on its time, with batches still pending.
      e.counts = e.counts.withMayHavePending(true);
    }
    BatchRef handoff = result.handoff();
    if (handoff != null) {
      if (result.handoffPermanent() || s.settings().batchPolicy().maxAttempts() == 1) {
        commands.add(failed(s, handoff, result.handoffError()));
        commands.add(new RecordBatchFailure(handoff.number(), result.handoffError()));
      } else {
        e.slots = e.slots.take(handoff, lane);
        e.counts = e.counts.batchStarted();
        commands.add(new StartBatch(handoff, lane));
      }
    }
    return Step.to(e.done(), commands);
  }

  private static RunCommand failed(RunState s, BatchRef batch, String error) {
    return new Warn("run " + s.runId() + ": batch " + batch.number() + " failed: " + error);
  }

  /**
   * How the loop waits for news: with chains running and the plan to keep ahead of them, for at
   * most the window's look; after a claim the run's checks, brake or pool held, for at most the
   * claim's look; after a claim found the slots full, for at most a second; else until news.
   */
  static RunTransitions.Wait waitFor(RunState s) {
    PlanWindow window = s.window();
    if (window.keepsAhead(s.stopping()) && !window.underWay() && !s.slots().isEmpty()) {
      return RunTransitions.Wait.KEEP_AHEAD;
    }
    if (s.heldLookMillis() > 0) {
      return RunTransitions.Wait.HELD;
    }
    return s.slotsFull() ? RunTransitions.Wait.SLOTS_FULL : RunTransitions.Wait.NEWS;
  }

  /**
   * The look after a claim that found the run's slots full passed with no news: if nothing of this
   * execution holds a slot and no planning call is under way, those that fill the slots may be dead
   * by now, and the slots held by no live holder are recovered.
   */
  static Step slotsFullLookOver(RunState s) {
    return s.slots().isEmpty() && !s.window().underWay()
        ? Step.to(s, new RunCommand.RecoverOrphanSlots())
        : Step.to(s);
  }

  /** The loop has seen the news so far. */
  static Step newsSeen(RunState s) {
    RunState.Edit e = s.edit();
    e.news = false;
    return Step.to(e.done());
  }

  /** The loop waited for news: the looks the last claim asked for are over. */
  static Step waited(RunState s) {
    RunState.Edit e = s.edit();
    e.heldLookMillis = 0;
    e.slotsFull = false;
    return Step.to(e.done());
  }

  /**
   * The loop's next move: with nothing in flight and no planning under way, a stopping run
   * finishes, and so does one whose planning is over with nothing left to claim unless paused; a
   * run that goes on continues as new when due.
   */
  static RunTransitions.Move next(RunState s, RunEvent.Facts f) {
    if (!s.slots().isEmpty() || s.window().underWay()) {
      return RunTransitions.Move.WAIT;
    }
    if (s.stopping() || (s.window().over() && !s.counts().mayHavePending() && !s.paused())) {
      return RunTransitions.Move.FINISH;
    }
    return s.continueAsNewDue(f.continueAsNewSuggested())
        ? RunTransitions.Move.HAND_OVER
        : RunTransitions.Move.WAIT;
  }

  /** Nothing is in flight and the run may end: PostgreSQL is asked to finish it. */
  static Step finishing(RunState s) {
    return Step.to(s, new Finish(s.stopping()));
  }
}
