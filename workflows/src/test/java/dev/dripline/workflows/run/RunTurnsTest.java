package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Await;
import dev.dripline.workflows.run.RunCommand.AwaitNews;
import dev.dripline.workflows.run.RunCommand.ConfigureActivities;
import dev.dripline.workflows.run.RunCommand.ContinueAsNew;
import dev.dripline.workflows.run.RunCommand.LoadRecord;
import dev.dripline.workflows.run.RunCommand.LoadRun;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.MarkRunning;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.RecoverOrphanSlots;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.StopBeforeStart;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.Until;
import dev.dripline.workflows.run.RunCommand.WithCapLock;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The workflow's turns ({@link TurnRules}) without Temporal: an execution's start, a pending run's
 * wait for its start time, the loop's moves, the hand-over at continue-as-new, an ended run's wait
 * for a retry and the workflow's end — each phase with the events that matter in it, and the
 * commands the workflow carries out, in order.
 */
class RunTurnsTest {
  private static final long RUN = 7;
  private static final long WINDOW = 60_000;
  private static final long LOOK = TurnRules.ENDED_RUN_LOOK.toMillis();

  /**
   * Takes events as {@link RunEngine} does, with the answers of the database queued by the test,
   * and keeps every other command carried out, in order. A wait ({@link Await}) is left to the
   * test: it ends with {@link #wake}, once the test has delivered what came meanwhile.
   */
  private static final class Driver {
    RunState state = RunState.initial(0);
    final List<RunCommand> commands = new ArrayList<>();
    final Deque<RunSettings> loads = new ArrayDeque<>();
    final Deque<StartResult> starts = new ArrayDeque<>();
    final Deque<FinishResult> finishes = new ArrayDeque<>();
    final Deque<RequeueResult> requeues = new ArrayDeque<>();

    long now = 1_000;
    boolean suggested;
    boolean handlersFinished = true;
    boolean answersOwed;
    Await waiting;

    RunEvent.Facts facts() {
      return new RunEvent.Facts(suggested, now, handlersFinished, answersOwed);
    }

    /** Takes the workflow's next turn; returns the commands it led to. */
    List<RunCommand> turn() {
      assertThat(waiting).as("a wait is under way").isNull();
      return on(new RunEvent.Turn(facts()));
    }

    /** Ends the wait under way, its condition come true if {@code news}. */
    List<RunCommand> wake(boolean news) {
      assertThat(waiting).as("a wait is under way").isNotNull();
      if (news) {
        assertThat(woken()).as("the wait's condition").isTrue();
      }
      Until until = waiting.until();
      waiting = null;
      return on(new RunEvent.Woke(until, news, facts()));
    }

    /** Whether the wait under way is over, as the workflow judges it. */
    boolean woken() {
      return RunTransitions.woken(waiting.until(), state, facts());
    }

    List<RunCommand> on(RunEvent event) {
      int from = commands.size();
      take(event);
      return List.copyOf(commands.subList(from, commands.size()));
    }

    private void take(RunEvent event) {
      Step step = RunTransitions.on(state, event);
      state = step.state();
      for (RunCommand command : step.commands()) {
        assertThat(waiting).as("nothing follows a wait").isNull();
        if (command instanceof Then then) {
          take(then.event());
        } else if (command instanceof WithCapLock locked) {
          take(locked.event());
        } else if (command instanceof RunCommand.Fill) {
          take(new RunEvent.FillSlots(facts()));
        } else {
          commands.add(command);
          if (command instanceof LoadRun) {
            take(new RunEvent.Loaded(loads.remove()));
          } else if (command instanceof LoadRecord) {
            take(new RunEvent.RecordRead(loads.remove()));
          } else if (command instanceof MarkRunning) {
            take(new RunEvent.MarkedRunning(starts.remove()));
          } else if (command instanceof StopBeforeStart) {
            take(new RunEvent.StoppedBeforeStart(finishes.remove()));
          } else if (command instanceof RunCommand.Finish) {
            take(new RunEvent.Finished(finishes.remove()));
          } else if (command instanceof RunCommand.RecoverSlots) {
            take(new RunEvent.SlotsRecovered(0));
          } else if (command instanceof RunCommand.AwaitRetry) {
            take(new RunEvent.EndedWaitBegins(now));
          } else if (command instanceof RunCommand.HandOverIfDue) {
            take(new RunEvent.HandOverLook(facts()));
          } else if (command instanceof Requeue requeue) {
            RequeueResult answer = requeues.remove();
            take(
                requeue.ended()
                    ? new RunEvent.EndedRequeued(answer)
                    : new RunEvent.Requeued(answer, requeue.before()));
          } else if (command instanceof Await await) {
            waiting = await;
          }
        }
      }
    }

    RunPhase phase() {
      return state.phase();
    }
  }

  private static RunSettings settings(RunStatus status) {
    return settings(status, null, Instant.EPOCH, false);
  }

  private static RunSettings settings(
      RunStatus status, Instant startAt, Instant startedAt, boolean stopRequested) {
    return new RunSettings(
        RUN,
        true,
        "b",
        status,
        10,
        null,
        8,
        16,
        startAt,
        startedAt,
        null,
        0,
        false,
        new BatchPolicy(1_000, 1_000, 3, 100, 1_000),
        100,
        1_000,
        0,
        stopRequested,
        WINDOW,
        false);
  }

  private static RunSettings pendingUntil(Instant startAt) {
    return settings(RunStatus.PENDING, startAt, null, false);
  }

  /** An execution begun with {@code carried} (null: fresh) whose record loads as {@code record}. */
  private static Driver opened(RunSettings record, RunCarryOver carried) {
    Driver d = new Driver();
    d.loads.add(record);
    d.on(new RunEvent.Begin(RUN, carried));
    d.turn();
    d.commands.clear();
    return d;
  }

  /** A fresh execution of a running run, in its loop. */
  private static Driver live() {
    Driver d = opened(settings(RunStatus.RUNNING), null);
    d.turn();
    d.commands.clear();
    return d;
  }

  /** A pending run due at {@code startAt}, about to look at the time. */
  private static Driver pending(Instant startAt) {
    Driver d = opened(pendingUntil(startAt), null);
    d.turn();
    d.turn();
    d.commands.clear();
    return d;
  }

  /** A running run whose finish ended it {@code status}: its workflow waits for a retry. */
  private static Driver ended(RunStatus status) {
    Driver d = live();
    d.finishes.add(new FinishResult(true, status, Instant.EPOCH));
    d.on(new RunEvent.Finishing());
    d.commands.clear();
    return d;
  }

  private static RunCarryOver carried(boolean paused, boolean stop, boolean retry) {
    return new RunCarryOver(3, paused, stop, retry, false, null, 10, 0L, 5, null, null, null);
  }

  private static RunCarryOver carriedEnded(RunStatus status, long deadline) {
    return new RunCarryOver(3, false, false, false, true, 100L, 100, 0L, 5, status, 500L, deadline);
  }

  // An execution's start.

  @Test
  void anExecutionReadsItsRunsRecordFirst() {
    Driver d = new Driver();
    d.loads.add(settings(RunStatus.RUNNING));

    assertThat(d.on(new RunEvent.Begin(RUN, null))).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.LOADING);
    assertThat(d.turn()).containsExactly(new LoadRun());
    assertThat(d.phase()).isEqualTo(RunPhase.OPENING);
    assertThat(d.state.found()).isTrue();
  }

  @Test
  void theWorkflowOfADeletedRunEndsWithNoStatus() {
    Driver d = opened(RunSettings.notFound(RUN), null);

    assertThat(d.turn()).containsExactly(new Log("run 7 no longer exists; nothing to do"));
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
    assertThat(RunTransitions.outcome(d.state)).isEqualTo(new RunOutcome(null, 0));
    assertThat(TurnRules.endingAnswer(d.state)).isEqualTo(RetryAnswer.gone());
  }

  @Test
  void aFreshExecutionOfARunningRunRecoversOrphanSlotsThenBeginsTheLoop() {
    Driver d = opened(settings(RunStatus.RUNNING), null);

    assertThat(d.turn())
        .containsExactly(new ConfigureActivities(), new RecoverOrphanSlots(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.loopBegun()).isTrue();
  }

  @Test
  void aContinuedExecutionOfALiveRunGoesStraightIntoTheLoop() {
    Driver d = opened(settings(RunStatus.RUNNING), carried(false, false, false));

    assertThat(d.turn()).containsExactly(new ConfigureActivities(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
  }

  @Test
  void aFreshExecutionOfAnEndedRunCompletesUnlessARetryStartedIt() {
    Driver d = opened(settings(RunStatus.FAILED), null);

    assertThat(d.turn()).containsExactly(new ConfigureActivities());
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void aRetryThatStartedAFreshExecutionOfAnEndedRunReopensItIntoTheLoop() {
    Driver d = new Driver();
    d.on(new RunEvent.Retry());
    d.loads.add(settings(RunStatus.FAILED));
    d.on(new RunEvent.Begin(RUN, null));
    d.turn();
    d.requeues.add(new RequeueResult(2, RunStatus.RUNNING));

    assertThat(d.turn())
        .containsExactly(
            new ConfigureActivities(),
            new Requeue(RunStatus.FAILED, true, 0),
            new Log("run 7: retry re-queued 2 batches; the run goes on"),
            new AnswerRetries(RetryAnswer.requeued(2)),
            new PublishStatus(),
            new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void aRetryOfAFreshlyLoadedEndedRunWithNothingToRequeueCompletesTheWorkflow() {
    Driver d = new Driver();
    d.on(new RunEvent.Retry());
    d.loads.add(settings(RunStatus.FAILED));
    d.on(new RunEvent.Begin(RUN, null));
    d.turn();
    d.requeues.add(new RequeueResult(0, RunStatus.FAILED));

    d.turn();

    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
    assertThat(d.state.status()).isEqualTo(RunStatus.FAILED);
  }

  @Test
  void anExecutionContinuedWhileItsRunHadEndedWaitsOnForARetry() {
    Driver d = opened(settings(RunStatus.FAILED), carriedEnded(RunStatus.FAILED, 50_000));

    assertThat(d.turn())
        .containsExactly(
            new ConfigureActivities(),
            new PublishStatus(),
            new RunCommand.AwaitRetry(),
            new PublishDetails());
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
    assertThat(d.state.retryDeadlineMillis()).isEqualTo(50_000);
  }

  @Test
  void anExecutionContinuedWhileItsRunHadEndedGoesIntoTheLoopIfItsRecordReopenedIt() {
    Driver d = opened(settings(RunStatus.RUNNING), carriedEnded(RunStatus.FAILED, 50_000));

    d.turn();

    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(d.state.waitingForRetry()).isFalse();
  }

  // A pending run's wait for its start time.

  @Test
  void aPendingRunPublishesItsStatusThenLooksAtItsStartTime() {
    Driver d = opened(pendingUntil(Instant.ofEpochMilli(5_000)), null);

    assertThat(d.turn()).containsExactly(new ConfigureActivities(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.PENDING);

    assertThat(d.turn()).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.PENDING_LOOK);
  }

  @Test
  void aPendingRunWaitsForItsStartTimeThenStarts() {
    Driver d = pending(Instant.ofEpochMilli(5_000));

    assertThat(d.turn()).containsExactly(new Await(Until.START, 4_000));
    assertThat(d.woken()).isFalse();
    d.now = 5_000;
    assertThat(d.wake(false)).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.PENDING);
    d.turn();
    d.starts.add(new StartResult(true, RunStatus.RUNNING, Instant.ofEpochMilli(5_000)));

    assertThat(d.turn()).containsExactly(new MarkRunning(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(d.state.counts().startedAt()).isEqualTo(Instant.ofEpochMilli(5_000));
  }

  @Test
  void aRunDueNowStartsWithoutWaiting() {
    Driver d = pending(null);
    d.starts.add(new StartResult(true, RunStatus.RUNNING, Instant.EPOCH));

    assertThat(d.turn()).containsExactly(new MarkRunning(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
  }

  @Test
  void aPausedPendingRunWaitsPastItsStartTimeWithoutATimerUntilResumed() {
    Driver d = pending(Instant.ofEpochMilli(5_000));
    d.on(new RunEvent.Pause());
    assertThat(d.turn()).containsExactly(new Await(Until.START, 4_000));
    assertThat(d.wake(true)).isEmpty();

    assertThat(d.turn())
        .containsExactly(
            new Log("run 7 is paused before its start"),
            new RecordStatus(RunStatus.PAUSED),
            new PublishStatus());
    d.now = 9_000;
    assertThat(d.turn()).containsExactly(new Await(Until.START, 0));
    assertThat(d.woken()).isFalse();

    d.on(new RunEvent.Resume());
    d.wake(true);
    assertThat(d.turn())
        .containsExactly(
            new Log("run 7 is pending before its start"),
            new RecordStatus(RunStatus.PENDING),
            new PublishStatus());
    d.starts.add(new StartResult(true, RunStatus.RUNNING, Instant.EPOCH));
    assertThat(d.turn()).startsWith(new MarkRunning());
  }

  @Test
  void aStopOfAPendingRunEndsItBeforeItStartedAndItsWorkflowWaitsForARetry() {
    Driver d = pending(Instant.ofEpochMilli(5_000));
    d.turn();
    d.on(new RunEvent.Stop());
    assertThat(d.woken()).isTrue();
    d.wake(true);
    d.finishes.add(new FinishResult(true, RunStatus.STOPPED, Instant.EPOCH));

    assertThat(d.turn())
        .containsExactly(
            new StopBeforeStart(),
            new PublishStatus(),
            new RunCommand.AwaitRetry(),
            new Log("run 7 is stopped; its workflow waits for a retry until 1970-01-01T00:01:01Z"),
            new PublishDetails());
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
    assertThat(d.state.status()).isEqualTo(RunStatus.STOPPED);
    assertThat(d.state.loopBegun()).isFalse();
  }

  @Test
  void aPendingRunStoppedWhileItsPauseWasRecordedEndsAtItsLook() {
    Driver d = pending(null);
    d.state = d.state.edit().hold(RunState.STOPPING, true).done();
    d.finishes.add(new FinishResult(true, RunStatus.STOPPED, Instant.EPOCH));

    assertThat(d.turn()).startsWith(new StopBeforeStart());
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
  }

  @Test
  void aPendingRunDeletedAsItIsStoppedEndsItsWorkflow() {
    Driver d = opened(pendingUntil(null), null);
    d.turn();
    d.on(new RunEvent.Stop());
    d.finishes.add(new FinishResult(true, null, null));

    assertThat(d.turn()).containsExactly(new StopBeforeStart(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void aRetryUpdateToAPendingRunIsRefusedOnceItsWaitIsOver() {
    Driver d = pending(Instant.ofEpochMilli(5_000));
    d.turn();
    d.answersOwed = true;
    d.on(new RunEvent.Retry());

    assertThat(d.wake(true))
        .containsExactly(
            new AnswerRetries(
                RetryAnswer.refused(RunControl.nothingToRequeue(RUN, RunStatus.PENDING))));
    assertThat(d.state.retryAsked()).isFalse();
    assertThat(d.phase()).isEqualTo(RunPhase.PENDING);
  }

  @Test
  void aPendingRunWakesForAStopARetryToAnswerOrAPauseOnly() {
    Driver d = pending(Instant.ofEpochMilli(5_000));
    d.turn();
    RunState waiting = d.state;
    RunEvent.Facts quiet = d.facts();

    assertThat(TurnRules.woken(Until.START, waiting, quiet)).isFalse();
    assertThat(TurnRules.woken(Until.START, waiting, new RunEvent.Facts(false, 1_000, true, true)))
        .isTrue();
    assertThat(
            TurnRules.woken(
                Until.START, RunTransitions.on(waiting, new RunEvent.Pause()).state(), quiet))
        .isTrue();
    assertThat(
            TurnRules.woken(
                Until.START, RunTransitions.on(waiting, new RunEvent.Stop()).state(), quiet))
        .isTrue();
    // A retry signal waits for the run's start: it is applied by the loop.
    assertThat(
            TurnRules.woken(
                Until.START, RunTransitions.on(waiting, new RunEvent.Retry()).state(), quiet))
        .isFalse();
  }

  @Test
  void aPendingRunFoundEndedAtItsStartWaitsForARetryOrEndsItsWorkflow() {
    Driver stopped = pending(null);
    stopped.starts.add(new StartResult(false, RunStatus.STOPPED, null));
    assertThat(stopped.turn())
        .startsWith(
            new MarkRunning(), new Log("run 7 did not start: it is STOPPED"), new PublishStatus());
    assertThat(stopped.phase()).isEqualTo(RunPhase.ENDED);

    Driver completed = pending(null);
    completed.starts.add(new StartResult(false, RunStatus.COMPLETED, null));
    completed.turn();
    assertThat(completed.phase()).isEqualTo(RunPhase.DONE);
    assertThat(RunTransitions.outcome(completed.state).status()).isEqualTo(RunStatus.COMPLETED);

    Driver gone = pending(null);
    gone.starts.add(new StartResult(false, null, null));
    gone.turn();
    assertThat(gone.phase()).isEqualTo(RunPhase.DONE);
    assertThat(RunTransitions.outcome(gone.state).status()).isNull();
  }

  // The loop.

  @Test
  void aLoopTurnAppliesRequestsFillsSlotsAndPublishesThenWaitsForNews() {
    Driver d = live();
    d.on(new RunEvent.Pause());
    d.state = d.state.with(d.state.window().called());

    assertThat(d.turn())
        .containsExactly(
            new RecordStatus(RunStatus.PAUSED), new PublishStatus(), new PublishDetails());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE_NEXT);
    assertThat(d.turn()).containsExactly(new AwaitNews());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
  }

  @Test
  void aLoopWithNothingLeftFinishesTheRunAndItsWorkflowEnds() {
    Driver d = live();
    d.on(new RunEvent.Stop());
    d.turn();
    d.finishes.add(new FinishResult(true, RunStatus.COMPLETED, Instant.EPOCH));

    d.turn();

    assertThat(d.commands).endsWith(new RunCommand.Finish(true), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void anIdleLoopDueToContinueAsNewHandsOver() {
    Driver d = live();
    d.state = d.state.with(d.state.counts().withMayHavePending(false));
    d.state = d.state.edit().hold(RunState.PAUSED, true).recorded(RunState.PAUSED, true).done();
    d.turn();
    d.suggested = true;

    assertThat(d.turn()).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.HANDING_OVER);
  }

  @Test
  void aRefusedFinishHandsOverOnlyIfTheExecutionIsDue() {
    Driver notDue = live();
    notDue.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));
    notDue.on(new RunEvent.Finishing());
    assertThat(notDue.phase()).isEqualTo(RunPhase.LIVE);

    Driver due = live();
    due.suggested = true;
    due.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));
    due.on(new RunEvent.Finishing());
    assertThat(due.phase()).isEqualTo(RunPhase.HANDING_OVER);
  }

  // The hand-over at continue-as-new.

  @Test
  void theHandOverWaitsForHandlersAppliesRequestsAndCarriesThePauseStopAndRetry() {
    Driver d = live();
    d.state = d.state.in(RunPhase.HANDING_OVER);
    d.handlersFinished = false;

    assertThat(d.turn()).containsExactly(new Await(Until.HANDLERS, 0));
    assertThat(d.woken()).isFalse();
    d.on(new RunEvent.Stop());
    d.on(new RunEvent.Retry());
    d.requeues.add(new RequeueResult(0, RunStatus.RUNNING));
    assertThat(d.wake(true)).startsWith(new RunCommand.RecordStop());
    assertThat(d.phase()).isEqualTo(RunPhase.HANDING_OVER_LOOK);

    assertThat(d.turn()).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.HANDING_OVER);
    d.turn();
    d.handlersFinished = true;
    d.wake(true);

    assertThat(d.turn())
        .containsExactly(
            new Log("run 7: continuing as new after 0 batches"),
            new ContinueAsNew(d.state.carryOver(false, true, false, null)));
    assertThat(((ContinueAsNew) d.commands.get(d.commands.size() - 1)).carry().stopRequested())
        .isTrue();
  }

  @Test
  void aPauseAndResumeTakenAsTheHandOverAppliesAreRecordedBeforeIt() {
    Driver d = live();
    d.state = d.state.in(RunPhase.HANDING_OVER_LOOK);
    d.on(new RunEvent.Pause());
    d.on(new RunEvent.Resume());

    assertThat(d.turn()).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.HANDING_OVER);
    d.turn();
    assertThat(d.wake(true))
        .containsExactly(new RecordStatus(RunStatus.RUNNING), new PublishStatus());
    assertThat(d.turn()).last().isInstanceOf(ContinueAsNew.class);
  }

  // An ended run's wait for a retry.

  @Test
  void anEndedRunWaitsForARetryAtMostALookAtATime() {
    Driver d = ended(RunStatus.FAILED);
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
    assertThat(d.state.retryDeadlineMillis()).isEqualTo(1_000 + WINDOW);

    assertThat(d.turn()).containsExactly(new Await(Until.RETRY, WINDOW));
    d.now = 30_000;
    d.loads.add(settings(RunStatus.FAILED));
    assertThat(d.wake(false)).containsExactly(new LoadRecord());
    assertThat(d.state.wakesWhileEnded()).isEqualTo(1);
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
    assertThat(d.turn()).containsExactly(new Await(Until.RETRY, 31_000));
  }

  @Test
  void anEndedRunsWindowOfTenMinutesOrMoreIsLookedAtEveryTenMinutes() {
    Driver d = ended(RunStatus.FAILED);
    RunState.Edit e = d.state.edit();
    e.retryDeadlineMillis = 1_000 + 3 * LOOK;
    d.state = e.done();

    assertThat(d.turn()).containsExactly(new Await(Until.RETRY, LOOK));
  }

  @Test
  void aRetryReopensAnEndedRunIntoTheLoopItLeft() {
    Driver d = ended(RunStatus.FAILED);
    d.turn();
    d.on(new RunEvent.Retry());
    assertThat(d.woken()).isTrue();
    assertThat(d.wake(true)).isEmpty();
    d.requeues.add(new RequeueResult(3, RunStatus.RUNNING));

    assertThat(d.turn())
        .containsExactly(
            new Requeue(RunStatus.FAILED, true, 0),
            new Log("run 7: retry re-queued 3 batches; the run goes on"),
            new AnswerRetries(RetryAnswer.requeued(3)),
            new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void aRetryReopensARunStoppedBeforeItStartedIntoTheLoopItBegins() {
    Driver d = pending(null);
    d.on(new RunEvent.Stop());
    d.finishes.add(new FinishResult(true, RunStatus.STOPPED, Instant.EPOCH));
    d.turn();
    d.on(new RunEvent.Retry());
    d.requeues.add(new RequeueResult(0, RunStatus.RUNNING));

    assertThat(d.turn()).endsWith(new PublishStatus(), new PublishStatus());
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
    assertThat(d.state.loopBegun()).isTrue();
  }

  @Test
  void aRetryWithNothingToRequeueLeavesTheRunWaitingAndLooksAtTheTimeAgain() {
    Driver d = ended(RunStatus.FAILED);
    d.on(new RunEvent.Retry());
    d.requeues.add(new RequeueResult(0, RunStatus.FAILED));

    d.turn();
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED_LOOK);
    d.now = 2_000;
    assertThat(d.turn()).containsExactly(new Await(Until.RETRY, WINDOW - 1_000));
  }

  @Test
  void aRetryOfAnEndedRunThatWasDeletedEndsItsWorkflow() {
    Driver d = ended(RunStatus.STOPPED);
    d.on(new RunEvent.Retry());
    d.requeues.add(new RequeueResult(0, null));

    d.turn();

    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void anEndedRunWhoseRecordIsGoneOrReopenedEndsOrGoesOn() {
    Driver gone = ended(RunStatus.FAILED);
    gone.turn();
    gone.loads.add(RunSettings.notFound(RUN));
    assertThat(gone.wake(false))
        .containsExactly(new LoadRecord(), new Log("run 7 no longer exists; its workflow ends"));
    assertThat(gone.phase()).isEqualTo(RunPhase.DONE);

    Driver reopened = ended(RunStatus.FAILED);
    reopened.turn();
    reopened.loads.add(settings(RunStatus.RUNNING));
    assertThat(reopened.wake(false))
        .containsExactly(
            new LoadRecord(),
            new Log("run 7 was re-opened in its record; it goes on"),
            new PublishStatus());
    assertThat(reopened.phase()).isEqualTo(RunPhase.LIVE);
  }

  @Test
  void theWaitOfAnEndedRunEndsWhenItsWindowPasses() {
    Driver d = ended(RunStatus.FAILED);
    d.now = 1_000 + WINDOW;

    assertThat(d.turn())
        .containsExactly(new Log("run 7: no retry within its window; its workflow completes"));
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
    assertThat(d.state.waitingForRetry()).isFalse();
  }

  @Test
  void anEndedRunContinuesAsNewAfterItsWakesOrWhenSuggestedOnceItsHandlersFinished() {
    Driver d = ended(RunStatus.FAILED);
    RunState.Edit e = d.state.edit();
    e.wakesWhileEnded = TurnRules.MAX_WAKES_WHILE_ENDED;
    d.state = e.done();

    assertThat(d.turn()).containsExactly(new Await(Until.HANDLERS_WHILE_ENDED, 0));
    assertThat(d.wake(true))
        .containsExactly(
            new Log("run 7: continuing as new while it waits for a retry"),
            new ContinueAsNew(d.state.carryOver(false, false, false, RunStatus.FAILED)));
    RunCarryOver carry = ((ContinueAsNew) d.commands.get(d.commands.size() - 1)).carry();
    assertThat(carry.endedStatus()).isEqualTo(RunStatus.FAILED);
    assertThat(carry.retryDeadlineMillis()).isEqualTo(1_000 + WINDOW);

    Driver suggested = ended(RunStatus.FAILED);
    suggested.suggested = true;
    assertThat(suggested.turn()).containsExactly(new Await(Until.HANDLERS_WHILE_ENDED, 0));
  }

  @Test
  void aRetryAsAnEndedRunHandsOverIsAppliedInThisExecution() {
    Driver d = ended(RunStatus.FAILED);
    d.suggested = true;
    d.handlersFinished = false;
    d.turn();
    d.on(new RunEvent.Retry());

    assertThat(d.wake(true)).isEmpty();
    assertThat(d.phase()).isEqualTo(RunPhase.ENDED);
    d.requeues.add(new RequeueResult(1, RunStatus.RUNNING));
    assertThat(d.turn()).startsWith(new Requeue(RunStatus.FAILED, true, 0));
    assertThat(d.phase()).isEqualTo(RunPhase.LIVE);
  }

  // The workflow's end.

  @Test
  void theWorkflowAnswersRetriesAskedAsItEndsAndWaitsForItsHandlersBeforeItReturns() {
    Driver d = ended(RunStatus.FAILED);
    d.now = 1_000 + WINDOW;
    d.turn();
    d.handlersFinished = false;
    RetryAnswer ending = RetryAnswer.refused("the workflow of run 7 was ending; try again");

    assertThat(d.turn())
        .containsExactly(new AnswerRetries(ending), new Await(Until.LAST_ANSWERS, 0));
    assertThat(d.woken()).isFalse();
    d.answersOwed = true;
    d.wake(true);
    assertThat(d.phase()).isEqualTo(RunPhase.DONE);
    d.answersOwed = false;
    d.handlersFinished = true;
    assertThat(d.turn())
        .containsExactly(new AnswerRetries(ending), new Await(Until.LAST_ANSWERS, 0));
    d.wake(true);
    assertThat(d.phase()).isEqualTo(RunPhase.OVER);
    assertThat(d.turn()).isEmpty();
    assertThat(RunTransitions.outcome(d.state)).isEqualTo(new RunOutcome(RunStatus.FAILED, 0));
  }

  @Test
  void aRetryAsACompletedRunsWorkflowEndsIsToldThereIsNothingToRequeue() {
    Driver d = live();
    d.finishes.add(new FinishResult(true, RunStatus.COMPLETED, Instant.EPOCH, 40L));
    d.on(new RunEvent.Finishing());

    assertThat(TurnRules.endingAnswer(d.state))
        .isEqualTo(RetryAnswer.refused(RunControl.nothingToRequeue(RUN, RunStatus.COMPLETED)));
    assertThat(RunTransitions.outcome(d.state)).isEqualTo(new RunOutcome(RunStatus.COMPLETED, 40));
  }
}
