package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.AwaitRetry;
import dev.dripline.workflows.run.RunCommand.HandOverIfDue;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecoverSlots;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.Sleep;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunEvent.ApplyLater;
import dev.dripline.workflows.run.RunEvent.EndedAtFinish;
import dev.dripline.workflows.run.RunState.Later;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules of a run's end (part of {@link RunTransitions}): what a finish's answer means, and the
 * wait of a run that ended failed or stopped for a retry, which re-opens it ({@link #revive}).
 */
final class EndRules {
  private EndRules() {}

  /**
   * The run ended as {@code status} (a pending run that was stopped, with what {@code finish}
   * recorded, or that did not start).
   */
  static Step ended(RunState s, RunStatus status, FinishResult finish) {
    RunState.Edit e = s.edit();
    e.status = status;
    if (finish != null) {
      e.counts = s.counts().ended(finish);
    }
    return Step.to(e.done(), new PublishStatus());
  }

  /**
   * {@code finish} answered (R5, {@link RunEnding}). Ended, the run's workflow completes or waits
   * for a retry; ended while a retry was asked, the retry applies to the run as it ended, whose
   * stop is over; refused — a batch is pending (a retry raced the finish) or holds a slot in
   * PostgreSQL that nothing here holds — the loop recovers the slots whose holder is dead, or waits
   * a while.
   */
  static Step finished(RunState s, FinishResult finish) {
    if (!finish.finished()) {
      return Step.to(s, new RecoverSlots(), new HandOverIfDue());
    }
    RunState.Edit e = s.edit();
    if (!s.retryAsked() || waitsForRetry(s, finish.status())) {
      e.status = finish.status();
      e.counts = s.counts().ended(finish);
      return Step.to(e.done(), new PublishStatus(), new Then(new EndedAtFinish()));
    }
    if (finish.status() == null) {
      return Step.to(
          s.in(RunPhase.DONE), new Log("run " + s.runId() + " no longer exists; nothing to do"));
    }
    e.status = finish.status();
    e.hold(RunState.STOPPING, false).recorded(RunState.STOPPING, false);
    e.counts = s.counts().ended(finish);
    return Step.to(e.done());
  }

  /** How long the loop waits after a refused finish that recovered nothing. */
  static final long FRUITLESS_FINISH_WAIT_MILLIS = 5_000;

  /**
   * The slots a refused finish recovered ({@link RunCommand.RecoverSlots}): those of a lost
   * execution or a dead worker go back to pending and are claimed or stopped; when none was, the
   * loop waits from the second refusal in a row on instead of spinning. Either way it claims again.
   */
  static Step slotsRecovered(RunState s, int recovered) {
    if (recovered > 0) {
      return Step.to(
          s.with(s.counts().withMayHavePending(true)),
          new Log(
              "run " + s.runId() + ": recovered " + recovered + " slots held by no live batch"));
    }
    return Step.to(fruitless(s), fruitlessWait(s));
  }

  /** One more refused finish in a row: batches may be pending to claim. */
  private static RunState fruitless(RunState s) {
    RunCounts counts = s.counts();
    return s.with(
        counts.withFruitlessFinishes(counts.fruitlessFinishes() + 1).withMayHavePending(true));
  }

  /** The wait after a refused finish: none after the first in a row. */
  private static List<RunCommand> fruitlessWait(RunState s) {
    return s.counts().fruitlessFinishes() > 0
        ? List.of(new Sleep(FRUITLESS_FINISH_WAIT_MILLIS))
        : List.of();
  }

  /** The run ended at its finish: its workflow completes, unless it waits for a retry. */
  static Step endedAtFinish(RunState s) {
    if (s.status() == null) {
      return Step.to(s.in(RunPhase.DONE));
    }
    return waitsForRetry(s, s.status())
        ? Step.to(s, new AwaitRetry())
        : Step.to(s.in(RunPhase.DONE));
  }

  /**
   * Whether the workflow of a run that ended {@code ended} stays open for a retry: it ended failed
   * or stopped, and the ended-run retry window is not zero.
   */
  static boolean waitsForRetry(RunState s, RunStatus ended) {
    return (ended == RunStatus.FAILED || ended == RunStatus.STOPPED)
        && s.settings().endedRunRetryWindowMillis() > 0;
  }

  /**
   * An ended run's workflow begins to wait for a retry: the stop that ended the run is over, and a
   * request from now on applies only after a retry.
   */
  static Step endedWaitBegins(RunState s, long nowMillis) {
    RunState.Edit e = s.edit();
    e.phase = RunPhase.ENDED;
    e.waitingForRetry = true;
    e.statusKnown = true;
    e.hold(RunState.STOPPING, false).recorded(RunState.STOPPING, false);
    if (!s.retryAsked()) {
      e.later = new Later(null, s.later().stop(), s.later().cap());
    }
    List<RunCommand> commands = new ArrayList<>();
    if (s.retryDeadlineMillis() == null) {
      e.retryDeadlineMillis = nowMillis + s.settings().endedRunRetryWindowMillis();
      commands.add(
          new Log(
              "run "
                  + s.runId()
                  + " is "
                  + s.status().wire()
                  + "; its workflow waits for a retry until "
                  + Instant.ofEpochMilli(e.retryDeadlineMillis)));
    }
    commands.add(new PublishDetails());
    return Step.to(e.done(), commands);
  }

  /** A retry of the ended run is applied: PostgreSQL re-queues as the endpoint does (R8). */
  static Step retryEnded(RunState s) {
    RunState.Edit e = s.edit();
    e.retryAsked = false;
    e.statusKnown = true;
    e.counts = s.counts().requeueTaken();
    return Step.to(e.done(), new Requeue(s.status(), true, s.counts().requeues()));
  }

  /**
   * An ended run's re-queue answered: gone, the workflow ends; re-opened, the run goes on; with
   * nothing to re-queue, the run stays as it ended and the requests kept for after the retry lapse.
   */
  static Step endedRequeued(RunState s, RequeueResult requeue) {
    RunState.Edit e = s.edit();
    if (requeue.status() == null) {
      e.waitingForRetry = false;
      return Step.to(
          e.done(),
          new Log("run " + s.runId() + " no longer exists; its workflow ends"),
          new AnswerRetries(RetryAnswer.gone()));
    }
    if (requeue.status().isActive()) {
      List<RunCommand> commands = new ArrayList<>();
      commands.add(
          new Log(
              "run "
                  + s.runId()
                  + ": retry re-queued "
                  + requeue.requeued()
                  + " batches; the run goes on"));
      commands.add(new AnswerRetries(RetryAnswer.requeued(requeue.requeued())));
      commands.addAll(revive(e, requeue.status()));
      return Step.to(e.done(), commands);
    }
    String refusal = RunControl.nothingToRequeue(s.runId(), requeue.status());
    e.later = Later.NONE;
    return Step.to(
        e.done(),
        new Log("run " + s.runId() + ": retry ignored: " + refusal),
        new AnswerRetries(RetryAnswer.refused(refusal)));
  }

  /** A look at the ended run's record found it re-opened (a retry the API could not signal). */
  static Step recordReopened(RunState s, RunSettings record) {
    RunState.Edit e = s.edit();
    // A stop or cap change the API recorded since then reached this workflow as ignored.
    Integer cap = s.later().cap();
    if (record.requestedCap() != null && !record.requestedCap().equals(s.requestedCap())) {
      cap = record.requestedCap();
    }
    e.later = new Later(s.later().pause(), s.later().stop() || record.stopRequested(), cap);
    List<RunCommand> commands = new ArrayList<>();
    commands.add(new Log("run " + s.runId() + " was re-opened in its record; it goes on"));
    commands.addAll(revive(e, record.status()));
    return Step.to(e.done(), commands);
  }

  /** The ended run's workflow stops waiting: the run is gone, or its retry window passed. */
  static Step waitOver(RunState s, String reason) {
    RunState.Edit e = s.edit();
    e.waitingForRetry = false;
    return Step.to(e.done(), new Log(reason));
  }

  /**
   * The run goes on after it had ended, re-opened with status {@code recorded}: a stop, pause,
   * resume or cap change that came after the retry applies now.
   */
  static List<RunCommand> revive(RunState.Edit e, RunStatus recorded) {
    e.waitingForRetry = false;
    e.retryDeadlineMillis = null;
    e.status = recorded == RunStatus.PAUSED ? RunStatus.PAUSED : RunStatus.RUNNING;
    boolean paused = e.status == RunStatus.PAUSED;
    e.hold(RunState.PAUSED, paused).recorded(RunState.PAUSED, paused);
    e.pauseToggled = false;
    e.hold(RunState.STOPPING, e.later.stop()).recorded(RunState.STOPPING, false);
    Integer cap = e.later.cap();
    if (cap != null) {
      e.requestedCap = cap;
      e.capUnrecorded = true;
    }
    e.later = new Later(e.later.pause(), false, null);
    // Planning may go on; the end time and refused finishes are forgotten.
    e.counts = e.counts.withMayHavePending(true).withFinishedAt(null).withFruitlessFinishes(0);
    e.window = e.window.withError(null);
    e.lookSoon();
    return List.of(new PublishStatus(), new Then(new ApplyLater()));
  }
}
