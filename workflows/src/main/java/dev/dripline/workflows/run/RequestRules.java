package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.AnswerCap;
import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordCap;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.RecordStop;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.Warn;
import dev.dripline.workflows.run.RunCommand.WithCapLock;
import dev.dripline.workflows.run.RunEvent.ApplyCap;
import dev.dripline.workflows.run.RunEvent.ApplyPause;
import dev.dripline.workflows.run.RunEvent.ApplyRetry;
import dev.dripline.workflows.run.RunEvent.CapApplied;
import dev.dripline.workflows.run.RunState.Later;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rules of what operators ask of a run — stop, retry, pause, resume, a cap change; by signal or
 * Update — and of how the workflow's loop applies them (part of {@link RunTransitions}). A request
 * is judged against the run's state with {@link RunControl}; one that comes before the run's status
 * is known, or while the run has ended and a retry not yet applied may re-open it, is kept for
 * later ({@link RunState#later}).
 */
final class RequestRules {
  private RequestRules() {}

  static Step stop(RunState s) {
    RunState.Edit e = s.edit();
    if (s.afterPendingRetry()) {
      e.later = new Later(s.later().pause(), true, s.later().cap());
      return Step.to(e.done());
    }
    Optional<String> refusal =
        RunControl.refusal(s.runId(), RunControl.Request.STOP, s.status(), false);
    if (refusal.isPresent()) {
      return Step.to(s, new Log("STOP ignored: " + refusal.get()));
    }
    e.hold(RunState.STOPPING, true);
    e.news = true;
    return Step.to(e.done());
  }

  /** A retry asked (R8): applied by the loop, where the Updates that asked are answered. */
  static Step retry(RunState s) {
    RunState.Edit e = s.edit();
    e.retryAsked = true;
    e.news = true;
    return Step.to(e.done());
  }

  static Step pause(RunState s) {
    RunState.Edit e = s.edit();
    if (!s.statusKnown() || s.afterPendingRetry()) {
      e.later = new Later(true, s.later().stop(), s.later().cap());
      return Step.to(e.done());
    }
    Optional<String> refusal =
        RunControl.refusal(s.runId(), RunControl.Request.PAUSE, s.status(), s.stopping());
    if (refusal.isPresent()) {
      return Step.to(s, new Log("PAUSE ignored: " + refusal.get()));
    }
    e.hold(RunState.PAUSED, true);
    e.pauseToggled = true;
    e.news = true;
    return Step.to(e.done());
  }

  static Step resume(RunState s) {
    RunState.Edit e = s.edit();
    if (!s.statusKnown() || s.afterPendingRetry()) {
      e.later = new Later(false, s.later().stop(), s.later().cap());
      return Step.to(e.done());
    }
    if (!s.paused()) {
      return Step.to(s, new Log("run " + s.runId() + ": resume ignored, the run is not paused"));
    }
    e.hold(RunState.PAUSED, false);
    e.pauseToggled = true;
    e.news = true;
    return Step.to(e.done());
  }

  static Step capSignal(RunState s, int cap) {
    if (cap < 1) {
      return Step.to(
          s,
          new Warn(
              "run " + s.runId() + ": cap change ignored, maxParallelBatches must be at least 1"));
    }
    RunState.Edit e = s.edit();
    if (s.afterPendingRetry()) {
      e.later = new Later(s.later().pause(), s.later().stop(), cap);
      return Step.to(e.done());
    }
    Optional<String> refusal =
        RunControl.refusal(s.runId(), RunControl.Request.CHANGE_CAP, s.status(), false);
    if (refusal.isPresent()) {
      return Step.to(s, new Log("CHANGE_CAP ignored: " + refusal.get()));
    }
    e.requestedCap = cap;
    e.capUnrecorded = true;
    e.news = true;
    return Step.to(e.done());
  }

  /**
   * A cap change by Update: applied and recorded before answering, so the record shows it once the
   * caller has the answer; a pending run's cap is recorded too, for when it starts.
   */
  static Step capUpdate(RunState s, int cap) {
    if (!s.found()) {
      return Step.to(s, new AnswerCap(CapAnswer.gone()));
    }
    Optional<String> refusal =
        RunControl.refusal(s.runId(), RunControl.Request.CHANGE_CAP, s.status(), false);
    if (refusal.isPresent() || s.waitingForRetry()) {
      return Step.to(
          s,
          new AnswerCap(
              CapAnswer.refused(
                  refusal.orElse(
                      "run "
                          + s.runId()
                          + " is "
                          + s.status().wire()
                          + "; its cap cannot change"))));
    }
    RunState.Edit e = s.edit();
    e.requestedCap = cap;
    e.capUnrecorded = false;
    int effective = e.done().effectiveCap();
    return Step.to(
        e.done().countedAgainst(effective),
        new RecordCap(cap, effective),
        new Then(new RunEvent.CapUpdated(cap, effective)));
  }

  /** A cap Update's change is recorded: the loop looks again, and the caller is answered. */
  static Step capUpdated(RunState s, int requestedCap, int effectiveCap) {
    RunState.Edit e = s.edit();
    e.news = true;
    return Step.to(
        e.lookSoon().done(),
        new PublishDetails(),
        new AnswerCap(CapAnswer.changed(requestedCap, effectiveCap)));
  }

  /** The loop's first step: a stop is recorded, so chains take no further batch. */
  static Step applyStop(RunState s) {
    if (s.stopping() && !s.stopRecorded()) {
      RunState.Edit e = s.edit();
      e.recorded(RunState.STOPPING, true);
      return Step.to(e.done(), new RecordStop(), new Then(new ApplyRetry()));
    }
    return Step.to(s, new Then(new ApplyRetry()));
  }

  /**
   * A retry of a live run (R8) re-queues; while a stop is under way it is refused — the stop's
   * finish would stop what it re-queued.
   */
  static Step applyRetry(RunState s) {
    RunState.Edit e = s.edit();
    List<RunCommand> commands = new ArrayList<>();
    if (s.retryAsked() && s.stopping() && !s.status().isTerminal()) {
      e.retryAsked = false;
      String refusal =
          RunControl.refusal(s.runId(), RunControl.Request.RETRY, s.status(), true).orElseThrow();
      commands.add(new Log("run " + s.runId() + ": retry ignored: " + refusal));
      commands.add(new AnswerRetries(RetryAnswer.refused(refusal)));
    }
    if (e.retryAsked) {
      e.retryAsked = false;
      commands.add(new Requeue(s.status(), false, e.counts.requeues()));
      e.counts = e.counts.requeueTaken();
    }
    commands.add(new Then(new ApplyCap()));
    return Step.to(e.done(), commands);
  }

  /**
   * A live run's re-queue answered: the Updates that asked are answered with what it did. A run
   * that paused itself for its failure budget (P6b) goes on once its failed batches are re-queued:
   * the re-queue renewed the budget, and the loop's pause step records it running.
   */
  static Step requeued(RunState requeuedIn, RequeueResult requeue, RunStatus before) {
    // Planning may go on (its failure is forgotten), and batches may be pending to claim.
    RunState s =
        requeuedIn
            .with(requeuedIn.counts().withMayHavePending(true))
            .with(requeuedIn.window().withError(null));
    List<RunCommand> commands = new ArrayList<>();
    commands.add(
        new Log("run " + s.runId() + ": retry re-queued " + requeue.requeued() + " batches"));
    RetryAnswer answer;
    if (requeue.status() == null) {
      answer = RetryAnswer.gone();
    } else if (requeue.requeued() > 0 || (before.isTerminal() && requeue.status().isActive())) {
      answer = RetryAnswer.requeued(requeue.requeued());
    } else {
      answer = RetryAnswer.refused(RunControl.nothingToRequeue(s.runId(), requeue.status()));
    }
    commands.add(new AnswerRetries(answer));
    if (requeue.status() == null || !requeue.status().isActive()) {
      return Step.to(s, commands);
    }
    RunState.Edit e = s.edit();
    if (requeue.requeued() > 0 && s.paused() && s.holds().contains(RunState.FAILURE_BUDGET)) {
      e.holds.remove(RunState.FAILURE_BUDGET);
      e.hold(RunState.PAUSED, false);
      e.pauseToggled = true;
      e.news = true;
      commands.add(new Log("run " + s.runId() + " goes on: its failed batches are re-queued"));
    }
    e.status = e.holds.contains(RunState.PAUSED) ? RunStatus.PAUSED : RunStatus.RUNNING;
    e.counts = e.counts.withFinishedAt(null);
    commands.add(new PublishStatus());
    return Step.to(e.done(), commands);
  }

  /** The loop's cap step: a cap signalled is applied and recorded, holding the cap lock. */
  static Step applyCap(RunState s) {
    return s.capUnrecorded()
        ? Step.to(
            s.edit().lookSoon().done(),
            new WithCapLock(new CapApplied()),
            new PublishDetails(),
            new Then(new ApplyPause()))
        : Step.to(s, new Then(new ApplyPause()));
  }

  /** The cap step, holding the cap lock: the requested cap, bounded as deployed now, recorded. */
  static Step capApplied(RunState s) {
    RunState.Edit e = s.edit();
    e.capUnrecorded = false;
    RunState next = e.done();
    int cap = next.effectiveCap();
    return Step.to(next.countedAgainst(cap), new RecordCap(next.requestedCap(), cap));
  }

  /** The loop's last step: a pause or resume not yet recorded is recorded. */
  static Step applyPause(RunState s) {
    if (!pauseUnrecorded(s)) {
      return Step.to(s);
    }
    RunState.Edit e = s.edit();
    e.recorded(RunState.PAUSED, s.paused());
    e.pauseToggled = false;
    e.status = s.paused() ? RunStatus.PAUSED : RunStatus.RUNNING;
    return Step.to(e.lookSoon().done(), new RecordStatus(e.status), new PublishStatus());
  }

  /**
   * Whether the run's record may not hold the workflow's pause: a pause or resume not yet recorded,
   * or a pair of them (see {@link RunState#pauseToggled}); a stopping run's status is the stop's to
   * write.
   */
  static boolean pauseUnrecorded(RunState s) {
    return !s.stopping() && (s.pauseToggled() || s.paused() != s.pauseRecorded());
  }

  /**
   * A pause or resume that came before the run's status was known, or after a retry that has now
   * re-opened the ended run, applies now.
   */
  static Step applyLater(RunState s) {
    if (s.later().pause() == null) {
      return Step.to(s);
    }
    Step applied = s.later().pause() ? pause(s) : resume(s);
    RunState.Edit e = applied.state().edit();
    e.later = new Later(null, e.later.stop(), e.later.cap());
    return Step.to(e.done(), applied.commands());
  }
}
