package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.CAP_FROM_SETTINGS;
import static dev.dripline.workflows.run.RunWorkflowVersions.EARLY_PAUSE_RESUME;
import static dev.dripline.workflows.run.RunWorkflowVersions.ENDED_RUN_WAITS_FOR_RETRY;
import static dev.dripline.workflows.run.RunWorkflowVersions.KEEP_EARLY_STOP_AND_RETRY;
import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_RECONCILED;
import static dev.dripline.workflows.run.RunWorkflowVersions.RECOVER_ORPHAN_SLOTS;
import static dev.dripline.workflows.run.RunWorkflowVersions.RETRY_IGNORED_WHILE_STOPPING;
import static dev.dripline.workflows.run.RunWorkflowVersions.WAIT_FOR_FULL_SLOTS;
import static dev.dripline.workflows.run.RunWorkflowVersions.WAIT_WHILE_HELD;

import dev.dripline.workflows.run.RunCommand.AnswerCap;
import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.AwaitRetry;
import dev.dripline.workflows.run.RunCommand.Claim;
import dev.dripline.workflows.run.RunCommand.Complete;
import dev.dripline.workflows.run.RunCommand.Fill;
import dev.dripline.workflows.run.RunCommand.Finish;
import dev.dripline.workflows.run.RunCommand.ForgetEnd;
import dev.dripline.workflows.run.RunCommand.HandOverIfDue;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.LookSoon;
import dev.dripline.workflows.run.RunCommand.NoPending;
import dev.dripline.workflows.run.RunCommand.PlanAgain;
import dev.dripline.workflows.run.RunCommand.PlanNextPage;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordCap;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.RecordStop;
import dev.dripline.workflows.run.RunCommand.RecoverSlots;
import dev.dripline.workflows.run.RunCommand.Reopen;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.SetCap;
import dev.dripline.workflows.run.RunCommand.StartBatch;
import dev.dripline.workflows.run.RunCommand.TakeEnd;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.WaitAfterRefusedFinish;
import dev.dripline.workflows.run.RunCommand.Warn;
import dev.dripline.workflows.run.RunCommand.WithCapLock;
import dev.dripline.workflows.run.RunEvent.Apply;
import dev.dripline.workflows.run.RunEvent.ApplyCap;
import dev.dripline.workflows.run.RunEvent.ApplyLater;
import dev.dripline.workflows.run.RunEvent.ApplyPause;
import dev.dripline.workflows.run.RunEvent.ApplyRetry;
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
import dev.dripline.workflows.run.RunState.Later;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rules of a run's lifecycle as one pure function: {@link #on} takes the run's state and an
 * event and decides the next state and the commands the workflow carries out, in order. No clock,
 * no Temporal call: the workflow passes the time in the event, and a rule that depends on whether
 * this execution has a change ({@link RunWorkflowVersions}) asks for it first ({@link
 * Step#needsVersion}) — before any command of its own, so that the workflow asks Temporal at the
 * same point of its command sequence as it always did. A rule whose later part must be judged after
 * an earlier part's commands were carried out continues in a {@link Then} event.
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
   * @param needsVersion a change id whose answer the rule needs first: the state is unchanged, and
   *     the workflow asks Temporal, notes the answer in the state and takes the event again
   */
  record Step(RunState state, List<RunCommand> commands, String needsVersion) {
    static Step to(RunState state, RunCommand... commands) {
      return new Step(state, List.of(commands), null);
    }

    static Step to(RunState state, List<RunCommand> commands) {
      return new Step(state, List.copyOf(commands), null);
    }

    static Step ask(RunState state, String changeId) {
      return new Step(state, List.of(), changeId);
    }
  }

  /** The state after this execution learnt whether it has change {@code changeId}. */
  static RunState knowing(RunState s, String changeId, boolean has) {
    RunState.Edit e = s.edit();
    e.versions.put(changeId, has);
    return e.done();
  }

  /** The next state and the commands to carry out when {@code event} happens in state {@code s}. */
  static Step on(RunState s, RunEvent event) {
    if (event instanceof Stop) {
      return stop(s);
    } else if (event instanceof Retry) {
      RunState.Edit e = s.edit();
      e.retryAsked = true;
      e.news = true;
      return Step.to(e.done());
    } else if (event instanceof Pause) {
      return pause(s);
    } else if (event instanceof Resume) {
      return resume(s);
    } else if (event instanceof CapSignal c) {
      return capSignal(s, c.maxParallelBatches());
    } else if (event instanceof CapUpdate c) {
      return capUpdate(s, c.maxParallelBatches());
    } else if (event instanceof CapUpdated c) {
      RunState.Edit e = s.edit();
      e.news = true;
      return Step.to(
          e.done(),
          new LookSoon(),
          new PublishDetails(),
          new AnswerCap(CapAnswer.changed(c.requestedCap(), c.effectiveCap())));
    } else if (event instanceof Begin b) {
      RunState.Edit e = s.edit();
      e.runId = b.runId();
      return Step.to(e.done());
    } else if (event instanceof Loaded l) {
      return loaded(s, l.settings());
    } else if (event instanceof Fresh) {
      return fresh(s);
    } else if (event instanceof LiveAgain) {
      return liveAgain(s);
    } else if (event instanceof Continued c) {
      return continued(s, c.carried());
    } else if (event instanceof ContinuedEnded c) {
      return continuedEnded(s, c.carried());
    } else if (event instanceof Ready) {
      RunState.Edit e = s.edit();
      e.statusKnown = true;
      return Step.to(e.done(), new Then(new ApplyLater()), new PublishStatus());
    } else if (event instanceof ApplyLater) {
      return applyLater(s);
    } else if (event instanceof Apply) {
      return applyStop(s);
    } else if (event instanceof ApplyRetry) {
      return applyRetry(s);
    } else if (event instanceof ApplyCap) {
      return s.capUnrecorded()
          ? Step.to(
              s,
              new WithCapLock(new CapApplied()),
              new PublishDetails(),
              new LookSoon(),
              new Then(new ApplyPause()))
          : Step.to(s, new Then(new ApplyPause()));
    } else if (event instanceof CapApplied) {
      RunState.Edit e = s.edit();
      e.capUnrecorded = false;
      RunState next = e.done();
      int cap = next.effectiveCap();
      return Step.to(next, new SetCap(cap), new RecordCap(next.requestedCap(), cap));
    } else if (event instanceof ApplyPause) {
      return applyPause(s);
    } else if (event instanceof Requeued r) {
      return requeued(s, r.result(), r.before());
    } else if (event instanceof FillSlots f) {
      return fillSlots(s, f.facts());
    } else if (event instanceof Claimed c) {
      return claimed(s, c.claim(), c.asked());
    } else if (event instanceof ClaimedFewer c) {
      return claimedFewer(s, c.slotsFull());
    } else if (event instanceof NewsSeen) {
      RunState.Edit e = s.edit();
      e.news = false;
      return Step.to(e.done());
    } else if (event instanceof Waited) {
      RunState.Edit e = s.edit();
      e.heldLookMillis = 0;
      e.slotsFull = false;
      return Step.to(e.done());
    } else if (event instanceof Finishing) {
      return Step.to(s, new Finish(s.stopping()));
    } else if (event instanceof Finished f) {
      return finished(s, f.finish());
    } else if (event instanceof EndedAtFinish) {
      return endedAtFinish(s);
    } else if (event instanceof PendingPauseAsked) {
      return pendingPauseAsked(s);
    } else if (event instanceof PendingRetryRefused) {
      RunState.Edit e = s.edit();
      e.retryAsked = false;
      return Step.to(
          e.done(),
          new AnswerRetries(
              RetryAnswer.refused(RunControl.nothingToRequeue(s.runId(), RunStatus.PENDING))));
    } else if (event instanceof Started) {
      RunState.Edit e = s.edit();
      e.status = RunStatus.RUNNING;
      return Step.to(e.done());
    } else if (event instanceof Ended ended) {
      RunState.Edit e = s.edit();
      e.status = ended.status();
      return Step.to(e.done(), new PublishStatus());
    } else if (event instanceof EndedWaitBegins begins) {
      return endedWaitBegins(s, begins.nowMillis());
    } else if (event instanceof RetryEnded) {
      RunState.Edit e = s.edit();
      e.retryAsked = false;
      e.statusKnown = true;
      return Step.to(e.done(), new Requeue(s.status(), true));
    } else if (event instanceof EndedRequeued r) {
      return endedRequeued(s, r.result());
    } else if (event instanceof RecordReopened r) {
      return recordReopened(s, r.record());
    } else if (event instanceof WaitOver w) {
      RunState.Edit e = s.edit();
      e.waitingForRetry = false;
      return Step.to(e.done(), new Log(w.reason()));
    }
    throw new IllegalArgumentException("no rule for " + event);
  }

  /**
   * Whether the run's record may not hold the workflow's pause: a pause or resume not yet recorded,
   * or a pair of them (see {@link RunState#pauseToggled}); a stopping run's status is the stop's to
   * write. Null if that depends on {@link RunWorkflowVersions#PAUSE_RECONCILED}, not yet known.
   */
  static Boolean pauseUnrecorded(RunState s) {
    if (s.stopping() || !s.pauseToggled() && s.paused() == s.pauseRecorded()) {
      return false;
    }
    return s.paused() != s.pauseRecorded() ? Boolean.TRUE : s.versions().get(PAUSE_RECONCILED);
  }

  // Operators' requests.

  private static Step stop(RunState s) {
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

  private static Step pause(RunState s) {
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

  private static Step resume(RunState s) {
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

  private static Step capSignal(RunState s, int cap) {
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
  private static Step capUpdate(RunState s, int cap) {
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
    RunState next = e.done();
    int effective = next.effectiveCap();
    return Step.to(
        next,
        new SetCap(effective),
        new RecordCap(cap, effective),
        new Then(new RunEvent.CapUpdated(cap, effective)));
  }

  // The start of an execution.

  /** The run's record as loaded; a cap signalled while it loaded wins over the recorded one. */
  private static Step loaded(RunState s, RunSettings settings) {
    RunState.Edit e = s.edit();
    e.settings = settings;
    if (!settings.found()) {
      return Step.to(e.done());
    }
    if (!s.capUnrecorded()) {
      e.requestedCap = settings.requestedCap();
    }
    RunState next = e.done();
    return Step.to(next, new SetCap(next.effectiveCap()));
  }

  /** A run paused before it started (R9) waits, in a new execution too, as the first one did. */
  private static Step fresh(RunState s) {
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
  private static Step liveAgain(RunState s) {
    RunState.Edit e = s.edit();
    boolean paused = s.status() == RunStatus.PAUSED;
    e.hold(RunState.PAUSED, paused).recorded(RunState.PAUSED, paused);
    if (s.settings().stopRequested()) {
      Boolean keep = s.versions().get(KEEP_EARLY_STOP_AND_RETRY);
      if (keep == null) {
        return Step.ask(s, KEEP_EARLY_STOP_AND_RETRY);
      }
      if (keep) {
        e.hold(RunState.STOPPING, true);
      }
    }
    return Step.to(e.done());
  }

  /** An execution continued as new takes over the pause, stop and retry carried to it. */
  private static Step continued(RunState s, RunCarryOver carried) {
    Boolean capFromSettings = s.versions().get(CAP_FROM_SETTINGS);
    if (capFromSettings == null) {
      return Step.ask(s, CAP_FROM_SETTINGS);
    }
    List<RunCommand> commands = new ArrayList<>();
    if (!capFromSettings) {
      commands.add(new SetCap(carried.effectiveCap()));
    }
    // Else the cap of the load stands: the record's requested cap (kept current by every cap
    // change, recorded before the hand-over) or one signalled before the load, bounded by the
    // definition's and the engine's caps as deployed now.
    RunState.Edit e = s.edit();
    boolean paused = carried.paused();
    e.hold(RunState.PAUSED, paused).recorded(RunState.PAUSED, paused);
    RunStatus recorded = s.settings().status();
    boolean recordedPaused = recorded == RunStatus.PAUSED;
    if (carried.endedStatus() == null
        && (recordedPaused || recorded == RunStatus.RUNNING)
        && recordedPaused != paused) {
      Boolean reconciled = s.versions().get(PAUSE_RECONCILED);
      if (reconciled == null) {
        return Step.ask(s, PAUSE_RECONCILED);
      }
      if (reconciled) {
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
    }
    Boolean keep = s.versions().get(KEEP_EARLY_STOP_AND_RETRY);
    if (keep == null) {
      return Step.ask(s, KEEP_EARLY_STOP_AND_RETRY);
    }
    if (keep) {
      // A stop or retry may have been taken already, delivered before this execution loaded the
      // run (at the continue-as-new boundary, or while loadRun waited for the database). The
      // record's stop counts for a live run only: a stopped run's record keeps it until a retry.
      if (carried.stopRequested()
          || carried.endedStatus() == null && s.settings().stopRequested()) {
        e.hold(RunState.STOPPING, true);
      }
      e.retryAsked |= carried.retryRequested();
    } else {
      e.hold(RunState.STOPPING, carried.stopRequested());
      e.retryAsked = carried.retryRequested();
    }
    e.status = paused ? RunStatus.PAUSED : RunStatus.RUNNING;
    return Step.to(e.done(), commands);
  }

  /**
   * The execution that follows one whose ended run waited for a retry: it waits on, unless the run
   * was re-opened in its record meanwhile (a retry recorded by the API whose signal never reached
   * the workflow). Requests received before the load apply only after a retry received with them.
   */
  private static Step continuedEnded(RunState s, RunCarryOver carried) {
    RunState.Edit e = s.edit();
    e.status = carried.endedStatus();
    e.retryDeadlineMillis = carried.retryDeadlineMillis();
    e.hold(RunState.PAUSED, false).recorded(RunState.PAUSED, false);
    e.pauseToggled = false;
    Integer capAfterRetry = s.later().cap();
    List<RunCommand> commands = new ArrayList<>();
    if (s.capUnrecorded()) {
      capAfterRetry = s.retryAsked() ? s.requestedCap() : null;
      e.capUnrecorded = false;
      e.requestedCap = s.settings().requestedCap();
      commands.add(new SetCap(e.done().effectiveCap()));
    }
    e.later = new Later(s.later().pause(), s.stopping() && s.retryAsked(), capAfterRetry);
    e.statusKnown = true;
    commands.add(new PublishStatus());
    if (s.settings().status().isActive()) {
      commands.add(new Log("run " + s.runId() + " was re-opened in its record; it goes on"));
      e.later =
          new Later(e.later.pause(), e.later.stop() || s.settings().stopRequested(), e.later.cap());
      commands.addAll(revive(e, s.settings().status()));
    }
    return Step.to(e.done(), commands);
  }

  // The loop's steps.

  /** The loop's first step: a stop is recorded, so chains take no further batch. */
  private static Step applyStop(RunState s) {
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
  private static Step applyRetry(RunState s) {
    RunState.Edit e = s.edit();
    List<RunCommand> commands = new ArrayList<>();
    if (s.retryAsked() && s.stopping() && !s.status().isTerminal()) {
      Boolean refuses = s.versions().get(RETRY_IGNORED_WHILE_STOPPING);
      if (refuses == null) {
        return Step.ask(s, RETRY_IGNORED_WHILE_STOPPING);
      }
      if (refuses) {
        e.retryAsked = false;
        String refusal =
            RunControl.refusal(s.runId(), RunControl.Request.RETRY, s.status(), true).orElseThrow();
        commands.add(new Log("run " + s.runId() + ": retry ignored: " + refusal));
        commands.add(new AnswerRetries(RetryAnswer.refused(refusal)));
      }
    }
    if (e.retryAsked) {
      e.retryAsked = false;
      commands.add(new Requeue(s.status(), false));
    }
    commands.add(new Then(new ApplyCap()));
    return Step.to(e.done(), commands);
  }

  /** A live run's re-queue answered: the Updates that asked are answered with what it did. */
  private static Step requeued(RunState s, RequeueResult requeue, RunStatus before) {
    List<RunCommand> commands = new ArrayList<>();
    commands.add(
        new Log("run " + s.runId() + ": retry re-queued " + requeue.requeued() + " batches"));
    commands.add(new PlanAgain());
    RetryAnswer answer;
    if (requeue.status() == null) {
      answer = RetryAnswer.gone();
    } else if (requeue.requeued() > 0 || before.isTerminal() && requeue.status().isActive()) {
      answer = RetryAnswer.requeued(requeue.requeued());
    } else {
      answer = RetryAnswer.refused(RunControl.nothingToRequeue(s.runId(), requeue.status()));
    }
    commands.add(new AnswerRetries(answer));
    if (requeue.status() == null || !requeue.status().isActive()) {
      return Step.to(s, commands);
    }
    RunState.Edit e = s.edit();
    e.status = s.paused() ? RunStatus.PAUSED : RunStatus.RUNNING;
    commands.add(new ForgetEnd());
    commands.add(new PublishStatus());
    return Step.to(e.done(), commands);
  }

  /** The loop's last step: a pause or resume not yet recorded is recorded. */
  private static Step applyPause(RunState s) {
    Boolean unrecorded = pauseUnrecorded(s);
    if (unrecorded == null) {
      return Step.ask(s, PAUSE_RECONCILED);
    }
    if (!unrecorded) {
      return Step.to(s);
    }
    RunState.Edit e = s.edit();
    e.recorded(RunState.PAUSED, s.paused());
    e.pauseToggled = false;
    e.status = s.paused() ? RunStatus.PAUSED : RunStatus.RUNNING;
    return Step.to(e.done(), new LookSoon(), new RecordStatus(e.status), new PublishStatus());
  }

  /**
   * A pause or resume that came before the run's status was known, or after a retry that has now
   * re-opened the ended run, applies now.
   */
  private static Step applyLater(RunState s) {
    if (s.later().pause() == null) {
      return Step.to(s);
    }
    Boolean has = s.versions().get(EARLY_PAUSE_RESUME);
    if (has == null) {
      return Step.ask(s, EARLY_PAUSE_RESUME);
    }
    if (!has) {
      return Step.to(s);
    }
    Step applied = s.later().pause() ? pause(s) : resume(s);
    RunState.Edit e = applied.state().edit();
    e.later = new Later(null, e.later.stop(), e.later.cap());
    return Step.to(e.done(), applied.commands());
  }

  /**
   * The loop fills free slots while nothing of the run's own holds it and the execution is not due
   * to continue as new: it claims pending batches, or plans the next page when none may be left.
   */
  private static Step fillSlots(RunState s, RunEvent.Facts f) {
    if (s.stopping() || s.paused() || f.continueAsNewDue() || f.free() <= 0) {
      return Step.to(s);
    }
    if (!f.mayHavePending()) {
      return Step.to(s, new PlanNextPage());
    }
    return Step.to(s, new Claim(f.free()));
  }

  /**
   * A claim's answer. What holds the run besides its own holds is what the claim reported; while
   * held, no batch starts (those in flight go on) and the loop claims again after the claim's look.
   * Otherwise the batches claimed start, and the loop claims again while slots are free.
   */
  private static Step claimed(RunState s, ClaimResult claim, int asked) {
    RunState.Edit e = s.edit();
    e.holds.removeIf(h -> !h.equals(RunState.PAUSED) && !h.equals(RunState.STOPPING));
    if (claim.holds() != null) {
      e.holds.addAll(claim.holds());
    }
    if (claim.held()) {
      Boolean waits = s.versions().get(WAIT_WHILE_HELD);
      if (waits == null) {
        return Step.ask(s, WAIT_WHILE_HELD);
      }
      if (waits) {
        e.heldLookMillis = Math.max(1, claim.lookAgainMillis());
        return Step.to(e.done());
      }
    }
    List<RunCommand> commands = new ArrayList<>();
    for (BatchRef batch : claim.batches()) {
      commands.add(new StartBatch(batch));
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
  private static Step claimedFewer(RunState s, boolean slotsFull) {
    if (slotsFull) {
      Boolean waits = s.versions().get(WAIT_FOR_FULL_SLOTS);
      if (waits == null) {
        return Step.ask(s, WAIT_FOR_FULL_SLOTS);
      }
      if (waits) {
        RunState.Edit e = s.edit();
        e.slotsFull = true;
        return Step.to(e.done());
      }
    }
    return Step.to(s, new NoPending(), new Fill());
  }

  /** What the loop does once it has applied requests and filled slots. */
  enum Turn {
    /** Ask PostgreSQL to finish the run ({@link RunEvent.Finishing}). */
    FINISH,
    /** Continue as new: nothing is in flight and the execution is due to. */
    HAND_OVER,
    /** Wait for news: a completion, a plan page or a request. */
    WAIT
  }

  /**
   * The loop's next move: with nothing in flight and no planning under way, a stopping run
   * finishes, and so does one whose planning is over with nothing left to claim unless paused; a
   * run that goes on continues as new when due.
   */
  static Turn next(RunState s, RunEvent.Facts f) {
    if (!f.slotsEmpty() || f.planUnderWay()) {
      return Turn.WAIT;
    }
    if (s.stopping() || f.planOver() && !f.mayHavePending() && !s.paused()) {
      return Turn.FINISH;
    }
    return f.continueAsNewDue() ? Turn.HAND_OVER : Turn.WAIT;
  }

  /**
   * Whether the workflow of a run that ended {@code ended} stays open for a retry; null if that
   * depends on {@link RunWorkflowVersions#ENDED_RUN_WAITS_FOR_RETRY}, not yet known.
   */
  static Boolean waitsForRetry(RunState s, RunStatus ended) {
    if ((ended == RunStatus.FAILED || ended == RunStatus.STOPPED)
        && s.settings().endedRunRetryWindowMillis() > 0) {
      return s.versions().get(ENDED_RUN_WAITS_FOR_RETRY);
    }
    return false;
  }

  /**
   * {@code finish} answered (R5, {@link RunEnding}). Ended, the run's workflow completes or waits
   * for a retry; ended while a retry was asked, the retry applies to the run as it ended, whose
   * stop is over; refused — a batch is pending (a retry raced the finish) or holds a slot in
   * PostgreSQL that nothing here holds — the loop recovers the slots whose holder is dead, or waits
   * a while.
   */
  private static Step finished(RunState s, FinishResult finish) {
    if (finish.finished()) {
      boolean endsHere = true;
      if (s.retryAsked()) {
        Boolean waits = waitsForRetry(s, finish.status());
        if (waits == null) {
          return Step.ask(s, ENDED_RUN_WAITS_FOR_RETRY);
        }
        endsHere = waits;
      }
      RunState.Edit e = s.edit();
      if (endsHere) {
        e.status = finish.status();
        return Step.to(
            e.done(), new TakeEnd(finish), new PublishStatus(), new Then(new EndedAtFinish()));
      }
      Boolean retryApplies = s.versions().get(RETRY_IGNORED_WHILE_STOPPING);
      if (retryApplies == null) {
        return Step.ask(s, RETRY_IGNORED_WHILE_STOPPING);
      }
      if (retryApplies) {
        if (finish.status() == null) {
          return Step.to(
              s, new Log("run " + s.runId() + " no longer exists; nothing to do"), new Complete());
        }
        e.status = finish.status();
        e.hold(RunState.STOPPING, false).recorded(RunState.STOPPING, false);
        return Step.to(e.done(), new TakeEnd(finish));
      }
    }
    Boolean recovers = s.versions().get(RECOVER_ORPHAN_SLOTS);
    if (recovers == null) {
      return Step.ask(s, RECOVER_ORPHAN_SLOTS);
    }
    return recovers
        ? Step.to(s, new RecoverSlots(), new HandOverIfDue())
        : Step.to(s, new WaitAfterRefusedFinish());
  }

  /** The run ended at its finish: its workflow completes, unless it waits for a retry. */
  private static Step endedAtFinish(RunState s) {
    if (s.status() == null) {
      return Step.to(s, new Complete());
    }
    Boolean waits = waitsForRetry(s, s.status());
    if (waits == null) {
      return Step.ask(s, ENDED_RUN_WAITS_FOR_RETRY);
    }
    return Step.to(s, waits ? new AwaitRetry() : new Complete());
  }

  // A pending run.

  /**
   * Takes the last pause or resume asked while the run is pending (kept until the run is under
   * way): a pause is recorded {@code paused} at once, a resume {@code pending} again (the run
   * starts at its start time, or now if that has passed).
   */
  private static Step pendingPauseAsked(RunState s) {
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

  // The end.

  /**
   * An ended run's workflow begins to wait for a retry: the stop that ended the run is over, and a
   * request from now on applies only after a retry.
   */
  private static Step endedWaitBegins(RunState s, long nowMillis) {
    RunState.Edit e = s.edit();
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

  /**
   * An ended run's re-queue answered: gone, the workflow ends; re-opened, the run goes on; with
   * nothing to re-queue, the run stays as it ended and the requests kept for after the retry lapse.
   */
  private static Step endedRequeued(RunState s, RequeueResult requeue) {
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
  private static Step recordReopened(RunState s, RunSettings record) {
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

  /**
   * The run goes on after it had ended, re-opened with status {@code recorded}: a stop, pause,
   * resume or cap change that came after the retry applies now.
   */
  private static List<RunCommand> revive(RunState.Edit e, RunStatus recorded) {
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
    return List.of(new Reopen(), new PublishStatus(), new Then(new ApplyLater()));
  }
}
