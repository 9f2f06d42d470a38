package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.RunCommand.AnswerCap;
import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordCap;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.RecordStop;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.WithCapLock;
import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The run's lifecycle rules ({@link RunTransitions}) without Temporal: each event in each state it
 * can meet, and the commands the workflow would carry out, in order.
 */
class RunTransitionsTest {
  private static final long RUN = 7;

  /**
   * Takes events as {@link RunEngine} does — a {@link Then} or {@link WithCapLock} is taken at
   * once, a re-queue answered from {@link #requeues} — and keeps every other command carried out,
   * in order.
   */
  private static final class Machine {
    RunState state;
    final Deque<RequeueResult> requeues = new ArrayDeque<>();
    final Deque<ClaimResult> claims = new ArrayDeque<>();
    final Deque<FinishResult> finishes = new ArrayDeque<>();

    final Deque<Integer> recovered = new ArrayDeque<>();

    final List<RunCommand> commands = new ArrayList<>();

    Machine(RunState state) {
      this.state = state;
    }

    /** Takes {@code event}; returns the commands it led to. */
    List<RunCommand> on(RunEvent event) {
      int from = commands.size();
      take(event);
      return List.copyOf(commands.subList(from, commands.size()));
    }

    RunEvent.Facts facts() {
      return new RunEvent.Facts(false);
    }

    private void take(RunEvent event) {
      Step step = RunTransitions.on(state, event);
      state = step.state();
      for (RunCommand command : step.commands()) {
        if (command instanceof Then then) {
          take(then.event());
        } else if (command instanceof WithCapLock locked) {
          take(locked.event());
        } else if (command instanceof RunCommand.Fill) {
          take(new RunEvent.FillSlots(facts()));
        } else {
          commands.add(command);
          if (command instanceof RunCommand.RecoverSlots) {
            take(new RunEvent.SlotsRecovered(recovered.isEmpty() ? 0 : recovered.remove()));
          } else if (command instanceof RunCommand.Claim claim) {
            take(new RunEvent.Claimed(claims.remove(), claim.free()));
          } else if (command instanceof RunCommand.Finish) {
            take(new RunEvent.Finished(finishes.remove()));
          } else if (command instanceof Requeue requeue) {
            RequeueResult answer = requeues.remove();
            take(
                requeue.ended()
                    ? new RunEvent.EndedRequeued(answer)
                    : new RunEvent.Requeued(answer, requeue.before()));
          }
        }
      }
    }
  }

  private static RunSettings settings(RunStatus status) {
    return settings(status, null, false, Instant.EPOCH);
  }

  private static RunSettings settings(
      RunStatus status, Integer requestedCap, boolean stopRequested, Instant startedAt) {
    return new RunSettings(
        RUN,
        true,
        "b",
        status,
        10,
        requestedCap,
        8,
        16,
        null,
        startedAt,
        null,
        0,
        false,
        new BatchPolicy(1_000, 1_000, 3, 100, 1_000),
        100,
        1_000,
        0,
        stopRequested,
        60_000,
        false);
  }

  /** A running run whose loop has begun, its slots counted against a cap of 2. */
  private static Machine running() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    m.on(new RunEvent.Fresh());
    m.on(new RunEvent.LiveAgain());
    m.on(new RunEvent.Ready());
    m.state = m.state.countedAgainst(2);
    m.commands.clear();
    return m;
  }

  /** {@code s}, where pending batches may be left to claim if {@code may}. */
  private static RunState pendingMay(RunState s, boolean may) {
    return s.with(s.counts().withMayHavePending(may));
  }

  /** {@code s} with every key in a batch: planning is over. */
  private static RunState allPlanned(RunState s) {
    return s.with(s.window().withDone(true));
  }

  /** {@code s} with a planning call under way. */
  private static RunState planningUnderWay(RunState s) {
    return s.with(s.window().called());
  }

  /** {@code s} with chains whose planner reported what is pending: the window is kept ahead. */
  private static RunState keepingAhead(RunState s) {
    return s.with(new PlanWindow(100, true, false, null, false, 10, 1, new ChainPace()));
  }

  /** {@code m} with {@code batch} holding a slot in {@code lane}, as if started there. */
  private static Machine holding(Machine m, BatchRef batch, int lane) {
    RunState.Edit e = m.state.edit();
    e.slots = e.slots.take(batch, lane);
    m.state = e.done();
    return m;
  }

  /** A run that ended {@code status} and whose workflow waits for a retry. */
  private static Machine endedWaiting(RunStatus status) {
    Machine m = running();
    m.on(new RunEvent.Ended(status, null));
    m.on(new RunEvent.EndedWaitBegins(1_000));
    m.commands.clear();
    return m;
  }

  private static Machine pending() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PENDING, null, false, null)));
    m.on(new RunEvent.Fresh());
    m.commands.clear();
    return m;
  }

  private static RunCarryOver carried(boolean paused, boolean stop, boolean retry) {
    return new RunCarryOver(3, paused, stop, retry, false, null, 10, 0L, 5, null, null, null);
  }

  // Stop.

  @Test
  void aStopHoldsTheRunStoppingAndTheLoopRecordsItOnce() {
    Machine m = running();

    assertThat(m.on(new RunEvent.Stop())).isEmpty();
    assertThat(m.state.holds()).containsExactly(RunState.STOPPING);
    assertThat(m.state.news()).isTrue();

    assertThat(m.on(new RunEvent.Apply())).containsExactly(new RecordStop());
    assertThat(m.on(new RunEvent.Apply())).isEmpty();
    assertThat(m.state.stopRecorded()).isTrue();
  }

  @Test
  void aStopOfAnEndedRunIsIgnored() {
    Machine m = running();
    m.on(new RunEvent.Ended(RunStatus.COMPLETED, null));

    assertThat(m.on(new RunEvent.Stop()))
        .containsExactly(new Log("STOP ignored: run 7 is already completed"));
    assertThat(m.state.stopping()).isFalse();
  }

  @Test
  void aStopBeforeTheRunIsLoadedIsTakenAndKeptByTheLoad() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    m.on(new RunEvent.Fresh());
    m.on(new RunEvent.LiveAgain());

    assertThat(m.state.stopping()).isTrue();
  }

  @Test
  void aStopOfAPendingRunEndsItsWaitForTheStart() {
    Machine m = pending();

    m.on(new RunEvent.Stop());

    assertThat(m.state.stopping()).isTrue();
  }

  // Pause and resume.

  @Test
  void aPauseIsHeldAtOnceAndRecordedByTheLoop() {
    Machine m = running();

    m.on(new RunEvent.Pause());
    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.pauseRecorded()).isFalse();

    assertThat(m.on(new RunEvent.Apply()))
        .containsExactly(new RecordStatus(RunStatus.PAUSED), new PublishStatus());
    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
    assertThat(m.state.pauseRecorded()).isTrue();
    assertThat(m.on(new RunEvent.Apply())).isEmpty();
  }

  @Test
  void aResumeIsRecordedRunning() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Apply());

    m.on(new RunEvent.Resume());

    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.RUNNING));
    assertThat(m.state.holds()).isEmpty();
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void aPauseAndResumeTakenTogetherRecordTheStatusAgain() {
    Machine m = running();

    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Resume());

    assertThat(RequestRules.pauseUnrecorded(m.state)).isTrue();
    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.RUNNING));
  }

  @Test
  void aResumeOfARunningRunIsIgnored() {
    Machine m = running();

    assertThat(m.on(new RunEvent.Resume()))
        .containsExactly(new Log("run 7: resume ignored, the run is not paused"));
    assertThat(m.state.pauseToggled()).isFalse();
  }

  @Test
  void aPauseWhileStoppingIsIgnoredAndAStoppingRunRecordsNoPause() {
    Machine m = running();
    m.on(new RunEvent.Stop());

    assertThat(m.on(new RunEvent.Pause()))
        .containsExactly(new Log("PAUSE ignored: run 7 is stopping; it cannot be paused"));
    assertThat(m.state.paused()).isFalse();
  }

  @Test
  void aStopAfterAPauseRecordsTheStopAndNotThePause() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Stop());

    assertThat(m.on(new RunEvent.Apply())).containsExactly(new RecordStop());
    assertThat(m.state.holds()).containsExactly(RunState.PAUSED, RunState.STOPPING);
  }

  @Test
  void aPauseBeforeTheStatusIsKnownIsKeptAndAppliedOnceItIs() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Pause());
    assertThat(m.state.paused()).isFalse();
    assertThat(m.state.later().pause()).isTrue();

    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    m.on(new RunEvent.Fresh());
    m.on(new RunEvent.LiveAgain());
    m.on(new RunEvent.Ready());

    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.later().pause()).isNull();
    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.PAUSED));
  }

  @Test
  void theLastOfAPauseAndResumeBeforeTheStatusIsKnownWins() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Resume());

    assertThat(m.state.later().pause()).isFalse();
  }

  @Test
  void aPauseKeptForLaterAppliesBeforeTheStatusIsPublished() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    m.on(new RunEvent.Fresh());
    m.on(new RunEvent.LiveAgain());
    m.commands.clear();

    Step ready = RunTransitions.on(m.state, new RunEvent.Ready());

    assertThat(ready.commands().get(0)).isEqualTo(new Then(new RunEvent.ApplyLater()));
    assertThat(ready.commands().get(1)).isEqualTo(new PublishStatus());
  }

  // Retry.

  @Test
  void aRetryOfALiveRunRequeuesAndAnswersWhatItDid() {
    Machine m = running();
    m.requeues.add(new RequeueResult(3, RunStatus.RUNNING));

    m.on(new RunEvent.Retry());
    List<RunCommand> done = m.on(new RunEvent.Apply());

    assertThat(done)
        .contains(
            new Requeue(RunStatus.RUNNING, false, 0),
            new AnswerRetries(RetryAnswer.requeued(3)),
            new PublishStatus());
    assertThat(m.state.retryAsked()).isFalse();
  }

  @Test
  void aRetryWithNothingToRequeueIsRefused() {
    Machine m = running();
    m.requeues.add(new RequeueResult(0, RunStatus.RUNNING));

    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.Apply()))
        .contains(
            new AnswerRetries(
                RetryAnswer.refused(RunControl.nothingToRequeue(RUN, RunStatus.RUNNING))));
  }

  @Test
  void aRetryOfADeletedRunAnswersGone() {
    Machine m = running();
    m.requeues.add(new RequeueResult(0, null));

    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.Apply()))
        .contains(new AnswerRetries(RetryAnswer.gone()))
        .doesNotContain(new PublishStatus());
  }

  @Test
  void aRetryThatReopensAnEndedRunAnswersRequeuedEvenWithNoBatch() {
    Machine m = withoutRetryWindow(running());
    m.on(new RunEvent.Retry());
    m.finishes.add(new FinishResult(true, RunStatus.FAILED, Instant.EPOCH));
    m.on(new RunEvent.Finishing());
    assertThat(m.state.status()).isEqualTo(RunStatus.FAILED);
    m.requeues.add(new RequeueResult(0, RunStatus.RUNNING));

    assertThat(m.on(new RunEvent.Apply())).contains(new AnswerRetries(RetryAnswer.requeued(0)));
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void aRetryOfAPausedRunKeepsItPaused() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Apply());
    m.requeues.add(new RequeueResult(1, RunStatus.PAUSED));

    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Apply());

    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
  }

  @Test
  void aRetryWhileStoppingIsRefusedAndRequeuesNothing() {
    Machine m = running();
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Retry());

    List<RunCommand> done = m.on(new RunEvent.Apply());

    assertThat(done)
        .containsExactly(
            new RecordStop(),
            new Log("run 7: retry ignored: run 7 is stopping; retry it once it has stopped"),
            new AnswerRetries(
                RetryAnswer.refused("run 7 is stopping; retry it once it has stopped")));
  }

  @Test
  void aRetryAsTheFinishRacesItAppliesToTheRunAsItEnded() {
    Machine m = running();
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Apply());
    m.on(new RunEvent.Retry());
    m.finishes.add(new FinishResult(true, RunStatus.STOPPED, Instant.EPOCH));

    List<RunCommand> done = withoutRetryWindow(m).on(new RunEvent.Finishing());

    assertThat(done).containsExactly(new RunCommand.Finish(true));
    assertThat(m.state.counts().finishedAt()).isEqualTo(Instant.EPOCH);
    assertThat(m.state.holds()).isEmpty();
    assertThat(m.state.stopRecorded()).isFalse();
    assertThat(m.state.status()).isEqualTo(RunStatus.STOPPED);
    assertThat(m.state.retryAsked()).isTrue();
  }

  // The cap.

  @Test
  void aCapSignalIsRecordedByTheLoopHoldingTheCapLock() {
    Machine m = running();

    m.on(new RunEvent.CapSignal(2));
    Step apply = RunTransitions.on(m.state, new RunEvent.ApplyCap());

    assertThat(apply.commands().get(0)).isEqualTo(new WithCapLock(new RunEvent.CapApplied()));
    m.state = m.state.countedAgainst(8);
    assertThat(m.on(new RunEvent.Apply()))
        .containsExactly(new RecordCap(2, 2), new RunCommand.PublishDetails());
    assertThat(m.state.capUnrecorded()).isFalse();
    assertThat(m.state.slots().cap()).isEqualTo(2);
  }

  @Test
  void aCapIsBoundedByTheDefinitionsCap() {
    Machine m = running();

    m.on(new RunEvent.CapSignal(50));

    assertThat(m.on(new RunEvent.Apply())).contains(new RecordCap(50, 8));
  }

  @Test
  void aCapSignalBelowOneIsIgnored() {
    Machine m = running();

    assertThat(m.on(new RunEvent.CapSignal(0)))
        .containsExactly(
            new RunCommand.Warn(
                "run 7: cap change ignored, maxParallelBatches must be at least 1"));
    assertThat(m.state.capUnrecorded()).isFalse();
  }

  @Test
  void aCapSignalToAnEndedRunIsIgnored() {
    Machine m = running();
    m.on(new RunEvent.Ended(RunStatus.COMPLETED, null));

    assertThat(m.on(new RunEvent.CapSignal(2)))
        .containsExactly(
            new Log("CHANGE_CAP ignored: run 7 is completed; its cap can no longer change"));
  }

  @Test
  void aCapSignalledBeforeTheLoadWinsOverTheRecordedOne() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.CapSignal(3));
    m.on(new RunEvent.Begin(RUN));

    assertThat(m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING, 6, false, Instant.EPOCH))))
        .isEmpty();
    assertThat(m.state.slots().cap()).isEqualTo(3);
    assertThat(m.state.capUnrecorded()).isTrue();
  }

  @Test
  void aCapUpdateIsRecordedBeforeItIsAnswered() {
    Machine m = running();

    assertThat(m.on(new RunEvent.CapUpdate(4)))
        .containsExactly(
            new RecordCap(4, 4),
            new RunCommand.PublishDetails(),
            new AnswerCap(CapAnswer.changed(4, 4)));
    assertThat(m.state.news()).isTrue();
    assertThat(m.state.slots().cap()).isEqualTo(4);
  }

  @Test
  void aCapUpdateWakesTheLoopOnlyOnceRecorded() {
    Machine m = running();
    m.on(new RunEvent.NewsSeen());

    Step update = RunTransitions.on(m.state, new RunEvent.CapUpdate(4));

    assertThat(update.state().news()).isFalse();
  }

  @Test
  void aCapUpdateOfAPendingRunIsRecordedForItsStart() {
    Machine m = pending();

    assertThat(m.on(new RunEvent.CapUpdate(2))).contains(new RecordCap(2, 2));
  }

  @Test
  void aCapUpdateOfAnEndedRunOrADeletedOneIsRefused() {
    Machine ended = endedWaiting(RunStatus.FAILED);
    assertThat(ended.on(new RunEvent.CapUpdate(2)))
        .containsExactly(
            new AnswerCap(CapAnswer.refused("run 7 is failed; its cap can no longer change")));

    Machine gone = new Machine(RunState.initial(0));
    gone.on(new RunEvent.Loaded(RunSettings.notFound(RUN)));
    assertThat(gone.on(new RunEvent.CapUpdate(2))).containsExactly(new AnswerCap(CapAnswer.gone()));
  }

  // A new execution.

  @Test
  void aRunPausedBeforeItStartedIsHeldPausedInANewExecution() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PAUSED, null, false, null)));

    m.on(new RunEvent.Fresh());

    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.pauseRecorded()).isTrue();
  }

  @Test
  void aNewExecutionOfALiveRunKeepsTheStopItsRecordHolds() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PAUSED, null, true, Instant.EPOCH)));
    m.on(new RunEvent.Fresh());

    m.on(new RunEvent.LiveAgain());

    assertThat(m.state.holds()).containsExactly(RunState.PAUSED, RunState.STOPPING);
  }

  @Test
  void aContinuedExecutionTakesTheCapOfItsSettingsNotTheCarriedOne() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));

    assertThat(m.on(new RunEvent.Continued(carried(false, false, false)))).isEmpty();
    assertThat(m.state.slots().cap()).isEqualTo(8);
  }

  @Test
  void aCarriedPauseWhoseRecordSaysRunningIsRecordedByTheFirstApply() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));

    m.on(new RunEvent.Continued(carried(true, false, false)));
    m.on(new RunEvent.Ready());

    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.pauseRecorded()).isFalse();
    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.PAUSED));
  }

  @Test
  void aCarriedResumeWhoseRecordSaysPausedIsRecordedRunning() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PAUSED)));
    m.on(new RunEvent.Continued(carried(false, false, false)));
    m.on(new RunEvent.Ready());

    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.RUNNING));
  }

  @Test
  void aRunPausedByItsFailureBudgetInAnEarlierExecutionGoesOnWhenRetried() {
    RunSettings spent = settings(RunStatus.PAUSED);
    spent = withBudgetSpent(spent);
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(spent));
    m.on(new RunEvent.Continued(carried(true, false, false)));
    m.on(new RunEvent.Ready());
    m.on(new RunEvent.Apply());
    assertThat(m.state.holds()).contains(RunState.FAILURE_BUDGET, RunState.PAUSED);
    m.requeues.add(new RequeueResult(2, RunStatus.PAUSED));

    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.RUNNING));
    assertThat(m.state.paused()).isFalse();
  }

  @Test
  void aRunAnOperatorPausedInAnEarlierExecutionStaysPausedWhenRetried() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PAUSED)));
    m.on(new RunEvent.Continued(carried(true, false, false)));
    m.on(new RunEvent.Ready());
    m.on(new RunEvent.Apply());
    m.requeues.add(new RequeueResult(2, RunStatus.PAUSED));

    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.Apply())).doesNotContain(new RecordStatus(RunStatus.RUNNING));
    assertThat(m.state.paused()).isTrue();
  }

  /**
   * {@code m} with no ended-run retry window: a run that ends failed or stopped ends its workflow.
   */
  private static Machine withoutRetryWindow(Machine m) {
    RunSettings s = m.state.settings();
    RunState.Edit e = m.state.edit();
    e.settings = withEnding(s, 0, s.failureBudgetSpent());
    m.state = e.done();
    return m;
  }

  private static RunSettings withBudgetSpent(RunSettings s) {
    return withEnding(s, s.endedRunRetryWindowMillis(), true);
  }

  /** {@code s} with the ended-run retry window and failure budget given. */
  private static RunSettings withEnding(
      RunSettings s, long endedRunRetryWindowMillis, boolean failureBudgetSpent) {
    return new RunSettings(
        s.runId(),
        s.found(),
        s.backfill(),
        s.status(),
        s.batchSize(),
        s.requestedCap(),
        s.definitionCap(),
        s.engineSafetyCap(),
        s.startAt(),
        s.startedAt(),
        s.totalKeys(),
        s.processedKeys(),
        s.planningDone(),
        s.batchPolicy(),
        s.planPageBatches(),
        s.maxBatchesPerExecution(),
        s.chainMillis(),
        s.stopRequested(),
        endedRunRetryWindowMillis,
        failureBudgetSpent);
  }

  @Test
  void aCarriedPauseTheRecordHoldsIsNotRecordedAgain() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.PAUSED)));
    m.on(new RunEvent.Continued(carried(true, false, false)));
    m.on(new RunEvent.Ready());

    assertThat(m.on(new RunEvent.Apply())).isEmpty();
  }

  @Test
  void aCarriedStopAndRetryAreAddedToOnesTakenBeforeTheLoad() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));

    m.on(new RunEvent.Continued(carried(false, true, false)));

    assertThat(m.state.stopping()).isTrue();
    assertThat(m.state.retryAsked()).isTrue();
  }

  @Test
  void aRecordedStopOfALiveRunBindsAContinuedExecution() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING, null, true, Instant.EPOCH)));

    m.on(new RunEvent.Continued(carried(false, false, false)));

    assertThat(m.state.stopping()).isTrue();
    assertThat(m.state.stopRecorded()).isFalse();
  }

  // A pending run.

  @Test
  void aPauseOfAPendingRunIsRecordedAtOnceAndHeldPastItsStart() {
    Machine m = pending();
    m.on(new RunEvent.Pause());

    assertThat(m.on(new RunEvent.PendingPauseAsked()))
        .containsExactly(
            new Log("run 7 is paused before its start"),
            new RecordStatus(RunStatus.PAUSED),
            new PublishStatus());
    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
  }

  @Test
  void aResumeOfAPausedPendingRunRecordsItPendingAgain() {
    Machine m = pending();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.PendingPauseAsked());
    m.on(new RunEvent.Resume());

    assertThat(m.on(new RunEvent.PendingPauseAsked()))
        .contains(new RecordStatus(RunStatus.PENDING));
    assertThat(m.state.holds()).isEmpty();
  }

  @Test
  void aPauseOfAnAlreadyPausedPendingRunRecordsNothing() {
    Machine m = pending();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.PendingPauseAsked());
    m.on(new RunEvent.Pause());

    assertThat(m.on(new RunEvent.PendingPauseAsked())).isEmpty();
    assertThat(m.state.later().pause()).isNull();
  }

  @Test
  void aRetryOfAPendingRunIsRefused() {
    Machine m = pending();
    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.PendingRetryRefused()))
        .containsExactly(
            new AnswerRetries(
                RetryAnswer.refused(RunControl.nothingToRequeue(RUN, RunStatus.PENDING))));
    assertThat(m.state.retryAsked()).isFalse();
  }

  @Test
  void aStartedRunIsRunning() {
    Machine m = pending();

    m.on(new RunEvent.Started(Instant.EPOCH));

    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  // The loop: claims, planning, finishing.

  private static final BatchRef B1 = new BatchRef(1, 1L, 10L, 10);
  private static final BatchRef B2 = new BatchRef(2, 11L, 20L, 10);

  @Test
  void freeSlotsAreFilledWithTheBatchesAClaimReturns() {
    Machine m = running();
    m.claims.add(new ClaimResult(List.of(B1, B2)));

    assertThat(m.on(new RunEvent.FillSlots(m.facts())))
        .containsExactly(
            new RunCommand.Claim(2, 0),
            new RunCommand.StartBatch(B1, 1),
            new RunCommand.StartBatch(B2, 2));
  }

  @Test
  void aClaimThatFindsNoPendingBatchPlansTheNextPage() {
    Machine m = running();
    m.claims.add(new ClaimResult(List.of(B1)));

    assertThat(m.on(new RunEvent.FillSlots(m.facts())))
        .containsExactly(
            new RunCommand.Claim(2, 0),
            new RunCommand.StartBatch(B1, 1),
            new RunCommand.PlanNextPage());
    assertThat(m.state.counts().mayHavePending()).isFalse();
  }

  @Test
  void aClaimThatFindsTheSlotsFullIsTriedAgainAfterALook() {
    Machine m = running();
    m.claims.add(new ClaimResult(List.of(), true));

    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).containsExactly(new RunCommand.Claim(2, 0));
    assertThat(m.state.slotsFull()).isTrue();

    m.on(new RunEvent.Waited());
    assertThat(m.state.slotsFull()).isFalse();
  }

  @Test
  void aHeldClaimStartsNothingAndIsTriedAgainAfterItsLook() {
    Machine m = running();
    m.claims.add(claimHeldBy("brake"));

    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).containsExactly(new RunCommand.Claim(2, 0));
    assertThat(m.state.heldLookMillis()).isEqualTo(500);
    assertThat(m.state.holds()).containsExactly("brake");
    assertThat(m.state.counts().mayHavePending()).isTrue();

    m.on(new RunEvent.Waited());
    assertThat(m.state.heldLookMillis()).isZero();
  }

  @Test
  void aHeldClaimWithoutALookIsTriedAgainAfterAMillisecond() {
    Machine m = running();
    m.claims.add(new ClaimResult(List.of(), false, List.of("replica-lag"), 0, 0, null));

    m.on(new RunEvent.FillSlots(m.facts()));

    assertThat(m.state.heldLookMillis()).isEqualTo(1);
  }

  @Test
  void theLoopWaitsAsTheLastClaimAndThePlanningWindowSay() {
    Machine m = holding(running(), B1, 1);
    assertThat(RunTransitions.waitFor(m.state)).isEqualTo(RunTransitions.Wait.NEWS);
    assertThat(RunTransitions.waitFor(keepingAhead(m.state)))
        .isEqualTo(RunTransitions.Wait.KEEP_AHEAD);
    // The window is kept ahead only while batches are in flight, no planning call is under way and
    // no stop is.
    assertThat(RunTransitions.waitFor(planningUnderWay(keepingAhead(m.state))))
        .isEqualTo(RunTransitions.Wait.NEWS);
    assertThat(RunTransitions.waitFor(keepingAhead(running().state)))
        .isEqualTo(RunTransitions.Wait.NEWS);
    m.on(new RunEvent.Stop());
    assertThat(RunTransitions.waitFor(keepingAhead(m.state))).isEqualTo(RunTransitions.Wait.NEWS);

    Machine held = holding(running(), B1, 1);
    held.claims.add(claimHeldBy("brake"));
    held.on(new RunEvent.FillSlots(held.facts()));
    assertThat(RunTransitions.waitFor(held.state)).isEqualTo(RunTransitions.Wait.HELD);
    assertThat(RunTransitions.waitFor(keepingAhead(held.state)))
        .isEqualTo(RunTransitions.Wait.KEEP_AHEAD);
    held.on(new RunEvent.Waited());
    assertThat(RunTransitions.waitFor(held.state)).isEqualTo(RunTransitions.Wait.NEWS);

    Machine full = running();
    full.claims.add(new ClaimResult(List.of(), true));
    full.on(new RunEvent.FillSlots(full.facts()));
    assertThat(RunTransitions.waitFor(full.state)).isEqualTo(RunTransitions.Wait.SLOTS_FULL);
    full.on(new RunEvent.Waited());
    assertThat(RunTransitions.waitFor(full.state)).isEqualTo(RunTransitions.Wait.NEWS);
  }

  @Test
  void aPlannedPageGoesIntoTheWindowAndAFailedCallStopsPlanning() {
    Machine m = running();
    PlanPage page = new PlanPage(10, true, 100L, 10);

    assertThat(m.on(new RunEvent.Planned(page, null, 0))).isEmpty();
    assertThat(m.state.window().done()).isTrue();
    assertThat(m.state.window().pendingAfterPlan()).isEqualTo(10);
    assertThat(m.on(new RunEvent.Planned(null, "no such table", 0)))
        .containsExactly(new RunCommand.Warn("run 7: planning failed: no such table"));
    assertThat(m.state.window().error()).isEqualTo("planning failed: no such table");
    assertThat(m.state.window().over()).isTrue();
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void noBatchIsClaimedWhilePausedStoppingOrDueToContinueAsNew() {
    Machine paused = running();
    paused.on(new RunEvent.Pause());
    assertThat(paused.on(new RunEvent.FillSlots(paused.facts()))).isEmpty();

    Machine stopping = running();
    stopping.on(new RunEvent.Stop());
    assertThat(stopping.on(new RunEvent.FillSlots(stopping.facts()))).isEmpty();

    Machine due = running();
    assertThat(due.on(new RunEvent.FillSlots(new RunEvent.Facts(true)))).isEmpty();

    Machine full = holding(holding(running(), B1, 1), B2, 2);
    assertThat(full.on(new RunEvent.FillSlots(full.facts()))).isEmpty();
  }

  @Test
  void heldByTheBrakeAlonePlanningStillGoesOn() {
    Machine m = running();
    m.on(new RunEvent.Claimed(claimHeldBy("brake"), 2));
    m.state = pendingMay(m.state, false);

    assertThat(m.on(new RunEvent.FillSlots(m.facts())))
        .containsExactly(new RunCommand.PlanNextPage());
  }

  @Test
  void aCompletedBatchCountsItsKeysAndItsChains() {
    Machine m = holding(running(), B1, 1);
    m.state = pendingMay(m.state, false);
    long before = m.state.counts().processedKeys();
    BatchResult chained = new BatchResult(BatchOutcome.COMPLETED, 10, 3, 30, null, null, false);

    assertThat(m.on(new RunEvent.BatchEnded(B1, chained, null))).isEmpty();

    assertThat(m.state.counts().processedKeys()).isEqualTo(before + 40);
    // The chain may have ended on its time, with batches still pending.
    assertThat(m.state.counts().mayHavePending()).isTrue();
  }

  @Test
  void aSkippedBatchCountsOnlyItsChainsKeys() {
    Machine m = holding(running(), B1, 1);
    m.state = pendingMay(m.state, false);
    long before = m.state.counts().processedKeys();
    BatchResult skipped = new BatchResult(BatchOutcome.SKIPPED, 10);

    assertThat(m.on(new RunEvent.BatchEnded(B1, skipped, null))).isEmpty();

    assertThat(m.state.counts().processedKeys()).isEqualTo(before);
    assertThat(m.state.counts().mayHavePending()).isFalse();
  }

  @Test
  void aChainedBatchHandedBackGoesOnInItsChainsLane() {
    Machine m = running();
    BatchResult handoff = new BatchResult(BatchOutcome.COMPLETED, 10, 1, 10, B2, "boom", false);

    assertThat(holding(m, B1, 2).on(new RunEvent.BatchEnded(B1, handoff, null)))
        .endsWith(new RunCommand.StartBatch(B2, 2));
  }

  @Test
  void aChainedBatchHandedBackWithNoAttemptLeftFailsNow() {
    Machine m = running();
    BatchResult handoff = new BatchResult(BatchOutcome.COMPLETED, 10, 0, 0, B2, "boom", true);

    assertThat(holding(m, B1, 2).on(new RunEvent.BatchEnded(B1, handoff, null)))
        .endsWith(
            new RunCommand.Warn("run 7: batch 2 failed: boom"),
            new RunCommand.RecordBatchFailure(2, "boom"));
  }

  @Test
  void aChainedBatchHandedBackUnderAOneAttemptPolicyFailsNow() {
    Machine m = new Machine(RunState.initial(0));
    RunSettings oneAttempt =
        new RunSettings(
            RUN,
            true,
            "b",
            RunStatus.RUNNING,
            10,
            null,
            8,
            16,
            null,
            Instant.EPOCH,
            null,
            0,
            false,
            new BatchPolicy(1_000, 1_000, 1, 100, 1_000),
            100,
            1_000,
            0,
            false,
            60_000,
            false);
    m.on(new RunEvent.Loaded(oneAttempt));
    BatchResult handoff = new BatchResult(BatchOutcome.COMPLETED, 10, 0, 0, B2, "boom", false);

    assertThat(holding(m, B1, 2).on(new RunEvent.BatchEnded(B1, handoff, null)))
        .endsWith(new RunCommand.RecordBatchFailure(2, "boom"));
  }

  @Test
  void aBatchWhoseActivityFailedForGoodFails() {
    Machine m = running();

    assertThat(holding(m, B1, 1).on(new RunEvent.BatchEnded(B1, null, "timeout")))
        .containsExactly(
            new RunCommand.Warn("run 7: batch 1 failed: timeout"),
            new RunCommand.RecordBatchFailure(1, "timeout"));
  }

  @Test
  void theLoopFinishesWhenNothingIsInFlightAndNothingIsLeft() {
    RunState s = allPlanned(pendingMay(running().state, false));
    RunEvent.Facts idle = new RunEvent.Facts(false);

    assertThat(RunTransitions.next(s, idle)).isEqualTo(RunTransitions.Move.FINISH);
    assertThat(RunTransitions.next(holding(running(), B1, 1).state, idle))
        .isEqualTo(RunTransitions.Move.WAIT);
    assertThat(RunTransitions.next(planningUnderWay(s), idle)).isEqualTo(RunTransitions.Move.WAIT);
    assertThat(RunTransitions.next(allPlanned(running().state), idle))
        .isEqualTo(RunTransitions.Move.WAIT);
    assertThat(RunTransitions.next(pendingMay(running().state, false), idle))
        .isEqualTo(RunTransitions.Move.WAIT);
  }

  @Test
  void aStoppingRunFinishesAndAPausedOneDoesNot() {
    Machine stopping = running();
    stopping.on(new RunEvent.Stop());
    RunEvent.Facts planning = new RunEvent.Facts(false);
    assertThat(RunTransitions.next(stopping.state, planning)).isEqualTo(RunTransitions.Move.FINISH);

    Machine paused = running();
    paused.on(new RunEvent.Pause());
    RunEvent.Facts done = new RunEvent.Facts(false);
    assertThat(RunTransitions.next(allPlanned(pendingMay(paused.state, false)), done))
        .isEqualTo(RunTransitions.Move.WAIT);
  }

  @Test
  void anIdleExecutionDueToContinueAsNewHandsOver() {
    RunEvent.Facts due = new RunEvent.Facts(true);

    assertThat(RunTransitions.next(running().state, due)).isEqualTo(RunTransitions.Move.HAND_OVER);
  }

  @Test
  void aCompletedRunsWorkflowCompletes() {
    Machine m = running();
    FinishResult completed = new FinishResult(true, RunStatus.COMPLETED, Instant.EPOCH, 40L);
    m.finishes.add(completed);

    assertThat(m.on(new RunEvent.Finishing()))
        .containsExactly(new RunCommand.Finish(false), new PublishStatus());
    assertThat(m.state.phase()).isEqualTo(RunPhase.DONE);
    assertThat(m.state.status()).isEqualTo(RunStatus.COMPLETED);
    assertThat(m.state.counts().processedKeys()).isEqualTo(40);
    assertThat(m.state.counts().finishedAt()).isEqualTo(Instant.EPOCH);
  }

  @Test
  void aFailedRunsWorkflowWaitsForARetryAskedAfterItsStatusIsPublished() {
    Machine m = running();
    m.finishes.add(new FinishResult(true, RunStatus.FAILED, Instant.EPOCH));

    Step finished =
        RunTransitions.on(
            m.state, new RunEvent.Finished(new FinishResult(true, RunStatus.FAILED, null)));
    assertThat(finished.commands().get(1)).isEqualTo(new Then(new RunEvent.EndedAtFinish()));

    assertThat(m.on(new RunEvent.Finishing()))
        .endsWith(new PublishStatus(), new RunCommand.AwaitRetry());
  }

  @Test
  void aFailedRunsWorkflowCompletesWithoutARetryWindow() {
    Machine m = withoutRetryWindow(running());
    m.finishes.add(new FinishResult(true, RunStatus.FAILED, Instant.EPOCH));

    assertThat(m.on(new RunEvent.Finishing())).endsWith(new PublishStatus());
    assertThat(m.state.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void aStoppedRunsWorkflowWaitsForTheRetryAskedAsItFinished() {
    Machine m = running();
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Apply());
    m.on(new RunEvent.Retry());
    m.finishes.add(new FinishResult(true, RunStatus.STOPPED, Instant.EPOCH));

    assertThat(m.on(new RunEvent.Finishing())).endsWith(new RunCommand.AwaitRetry());
    assertThat(m.state.retryAsked()).isTrue();
  }

  @Test
  void aRefusedFinishRecoversSlotsHeldByNoLiveBatchAndContinuesAsNewIfDue() {
    Machine m = running();
    m.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));

    assertThat(m.on(new RunEvent.Finishing()))
        .containsExactly(
            new RunCommand.Finish(false),
            new RunCommand.RecoverSlots(),
            new RunCommand.HandOverIfDue());
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void aRunDeletedAsItFinishesWithARetryAskedEndsItsWorkflow() {
    Machine m = running();
    m.on(new RunEvent.Retry());
    m.finishes.add(new FinishResult(true, null, null));

    assertThat(m.on(new RunEvent.Finishing()))
        .containsExactly(
            new RunCommand.Finish(false), new Log("run 7 no longer exists; nothing to do"));
    assertThat(m.state.phase()).isEqualTo(RunPhase.DONE);
  }

  @Test
  void aStopWhilePlanningFinishesOnlyOnceThePlanningCallHasReturned() {
    Machine m = running();
    m.on(new RunEvent.Stop());
    RunEvent.Facts facts = new RunEvent.Facts(false);

    assertThat(m.on(new RunEvent.FillSlots(facts))).isEmpty();
    assertThat(RunTransitions.next(planningUnderWay(m.state), facts))
        .isEqualTo(RunTransitions.Move.WAIT);
    assertThat(RunTransitions.next(m.state, facts)).isEqualTo(RunTransitions.Move.FINISH);
  }

  @Test
  void aPauseWhilePlanningClaimsNothingAndNeverFinishes() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.state = planningUnderWay(m.state);
    RunEvent.Facts facts = new RunEvent.Facts(false);

    assertThat(m.on(new RunEvent.FillSlots(facts))).isEmpty();
    assertThat(RunTransitions.next(allPlanned(pendingMay(m.state, false)), facts))
        .isEqualTo(RunTransitions.Move.WAIT);
  }

  @Test
  void aRetryBeforeTheLoadOfALiveRunIsAppliedByItsFirstApply() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    m.on(new RunEvent.Fresh());
    m.on(new RunEvent.LiveAgain());
    m.on(new RunEvent.Ready());
    m.requeues.add(new RequeueResult(1, RunStatus.RUNNING));

    assertThat(m.on(new RunEvent.Apply())).contains(new AnswerRetries(RetryAnswer.requeued(1)));
  }

  @Test
  void aCapSignalToAPendingRunIsRecordedOnceItRuns() {
    Machine m = pending();

    m.on(new RunEvent.CapSignal(3));
    m.on(new RunEvent.Started(Instant.EPOCH));
    m.on(new RunEvent.Ready());

    assertThat(m.on(new RunEvent.Apply())).contains(new RecordCap(3, 3));
  }

  @Test
  void aStopBeforeThePauseOfAPendingRunIsRecordedEndsItsWait() {
    Machine m = pending();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.PendingPauseAsked());

    m.on(new RunEvent.Stop());

    assertThat(m.state.holds()).containsExactly(RunState.PAUSED, RunState.STOPPING);
  }

  // Holds from claims.

  @Test
  void aClaimsHoldsReplaceTheLastClaimsAndKeepTheRunsOwn() {
    Machine m = running();
    m.on(new RunEvent.Pause());

    m.on(new RunEvent.Claimed(claimHeldBy("brake", "replica-lag"), 2));
    assertThat(m.state.holds()).containsExactly(RunState.PAUSED, "brake", "replica-lag");
    assertThat(m.state.claimHolds()).containsExactly("brake", "replica-lag");

    m.on(new RunEvent.Claimed(claimHeldBy("pool:etl"), 2));
    assertThat(m.state.claimHolds()).containsExactly("pool:etl");

    m.on(new RunEvent.Claimed(new ClaimResult(List.of()), 2));
    assertThat(m.state.holds()).containsExactly(RunState.PAUSED);
  }

  @Test
  void aClaimRecordedBeforeHoldsExistedClearsThem() {
    Machine m = running();
    m.on(new RunEvent.Claimed(claimHeldBy("brake"), 2));

    m.on(new RunEvent.Claimed(new ClaimResult(List.of(), false, null, 0, 0, null), 2));

    assertThat(m.state.holds()).isEmpty();
  }

  @Test
  void aRunBeyondItsFailureBudgetPausesItselfAndTheLoopRecordsIt() {
    Machine m = running();

    m.on(new RunEvent.Claimed(claimHeldBy(RunState.FAILURE_BUDGET), 2));

    assertThat(m.state.holds()).containsExactly(RunState.FAILURE_BUDGET, RunState.PAUSED);
    assertThat(m.state.news()).isTrue();
    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.PAUSED));
    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).isEmpty();
  }

  @Test
  void aStoppingRunBeyondItsFailureBudgetDoesNotPause() {
    Machine m = running();
    m.on(new RunEvent.Stop());

    m.on(new RunEvent.Claimed(claimHeldBy(RunState.FAILURE_BUDGET), 2));

    assertThat(m.state.paused()).isFalse();
  }

  @Test
  void aRunResumedBeyondItsFailureBudgetPausesItselfAgainAtItsNextClaim() {
    Machine m = running();
    m.on(new RunEvent.Claimed(claimHeldBy(RunState.FAILURE_BUDGET), 2));
    m.on(new RunEvent.Apply());
    m.on(new RunEvent.Resume());
    m.on(new RunEvent.Apply());
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);

    m.on(new RunEvent.Claimed(claimHeldBy(RunState.FAILURE_BUDGET), 2));

    assertThat(m.state.paused()).isTrue();
  }

  @Test
  void aRetryOfARunPausedByItsFailureBudgetGoesOn() {
    Machine m = running();
    m.on(new RunEvent.Claimed(claimHeldBy(RunState.FAILURE_BUDGET), 2));
    m.on(new RunEvent.Apply());
    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
    m.requeues.add(new RequeueResult(4, RunStatus.PAUSED));

    m.on(new RunEvent.Retry());
    List<RunCommand> done = m.on(new RunEvent.Apply());

    assertThat(done)
        .contains(new AnswerRetries(RetryAnswer.requeued(4)), new RecordStatus(RunStatus.RUNNING));
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(m.state.holds()).isEmpty();
  }

  @Test
  void aRetryOfARunPausedByAnOperatorLeavesItPaused() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Apply());
    m.requeues.add(new RequeueResult(4, RunStatus.PAUSED));

    m.on(new RunEvent.Retry());
    List<RunCommand> done = m.on(new RunEvent.Apply());

    assertThat(done).doesNotContain(new RecordStatus(RunStatus.RUNNING));
    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
    assertThat(m.state.paused()).isTrue();
  }

  @Test
  void aPoolHoldOnlyWaitsForTheNextLook() {
    Machine m = running();

    m.on(new RunEvent.Claimed(claimHeldBy("pool:etl"), 2));

    assertThat(m.state.paused()).isFalse();
    assertThat(m.state.heldLookMillis()).isEqualTo(500);
  }

  private static ClaimResult claimHeldBy(String... holds) {
    return new ClaimResult(List.of(), false, List.of(holds), 500, 0, 1L);
  }

  // The continue-as-new boundary.

  @Test
  void aPauseNotYetRecordedMustBeRecordedBeforeTheHandOver() {
    Machine m = running();
    m.on(new RunEvent.Pause());

    assertThat(RequestRules.pauseUnrecorded(m.state)).isTrue();
    m.on(new RunEvent.Apply());
    assertThat(RequestRules.pauseUnrecorded(m.state)).isFalse();
  }

  @Test
  void aStoppingRunHandsOverWithoutRecordingItsPause() {
    Machine m = running();
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.Stop());

    assertThat(RequestRules.pauseUnrecorded(m.state)).isFalse();
  }

  // An ended run waiting for a retry.

  @Test
  void anEndedRunsWaitDropsItsStopAndSetsItsDeadlineOnce() {
    Machine m = running();
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Apply());
    m.on(new RunEvent.Ended(RunStatus.STOPPED, null));

    m.on(new RunEvent.EndedWaitBegins(1_000));
    assertThat(m.state.holds()).isEmpty();
    assertThat(m.state.recorded()).isEmpty();
    assertThat(m.state.waitingForRetry()).isTrue();
    assertThat(m.state.retryDeadlineMillis()).isEqualTo(61_000);

    m.on(new RunEvent.EndedWaitBegins(5_000));
    assertThat(m.state.retryDeadlineMillis()).isEqualTo(61_000);
  }

  @Test
  void requestsToAnEndedRunWithNoRetryPendingAreIgnored() {
    Machine m = endedWaiting(RunStatus.FAILED);

    assertThat(m.on(new RunEvent.Stop())).hasSize(1);
    assertThat(m.on(new RunEvent.Pause())).hasSize(1);
    assertThat(m.on(new RunEvent.CapSignal(2))).hasSize(1);
    assertThat(m.state.holds()).isEmpty();
    assertThat(m.state.later()).isEqualTo(RunState.Later.NONE);
  }

  @Test
  void requestsAfterAPendingRetryOfAnEndedRunApplyOnceItReopensIt() {
    Machine m = endedWaiting(RunStatus.FAILED);
    m.requeues.add(new RequeueResult(2, RunStatus.RUNNING));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Stop());
    m.on(new RunEvent.Pause());
    m.on(new RunEvent.CapSignal(2));
    assertThat(m.state.later()).isEqualTo(new RunState.Later(true, true, 2));

    List<RunCommand> done = m.on(new RunEvent.RetryEnded());

    assertThat(done)
        .startsWith(
            new Requeue(RunStatus.FAILED, true, 0),
            new Log("run 7: retry re-queued 2 batches; the run goes on"),
            new AnswerRetries(RetryAnswer.requeued(2)),
            new PublishStatus());
    assertThat(m.state.waitingForRetry()).isFalse();
    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(m.state.stopping()).isTrue();
    assertThat(m.state.capUnrecorded()).isTrue();
    assertThat(m.state.requestedCap()).isEqualTo(2);
    // The pause came while stopping: refused once applied.
    assertThat(m.state.paused()).isFalse();
    assertThat(m.state.later()).isEqualTo(RunState.Later.NONE);
  }

  @Test
  void aPauseAfterAPendingRetryPausesTheReopenedRun() {
    Machine m = endedWaiting(RunStatus.STOPPED);
    m.requeues.add(new RequeueResult(2, RunStatus.RUNNING));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Pause());

    m.on(new RunEvent.RetryEnded());

    assertThat(m.state.paused()).isTrue();
    assertThat(m.on(new RunEvent.Apply())).contains(new RecordStatus(RunStatus.PAUSED));
  }

  @Test
  void aRetryOfAnEndedRunWithNothingToRequeueDropsTheRequestsKeptForIt() {
    Machine m = endedWaiting(RunStatus.FAILED);
    m.requeues.add(new RequeueResult(0, RunStatus.FAILED));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Stop());

    List<RunCommand> done = m.on(new RunEvent.RetryEnded());

    assertThat(done)
        .contains(
            new AnswerRetries(
                RetryAnswer.refused(RunControl.nothingToRequeue(RUN, RunStatus.FAILED))));
    assertThat(m.state.waitingForRetry()).isTrue();
    assertThat(m.state.later()).isEqualTo(RunState.Later.NONE);
  }

  @Test
  void aRetryOfADeletedEndedRunEndsTheWait() {
    Machine m = endedWaiting(RunStatus.FAILED);
    m.requeues.add(new RequeueResult(0, null));
    m.on(new RunEvent.Retry());

    assertThat(m.on(new RunEvent.RetryEnded())).contains(new AnswerRetries(RetryAnswer.gone()));
    assertThat(m.state.waitingForRetry()).isFalse();
    assertThat(m.state.status()).isEqualTo(RunStatus.FAILED);
  }

  @Test
  void aRetryReopeningAPausedRunKeepsItPaused() {
    Machine m = endedWaiting(RunStatus.STOPPED);
    m.requeues.add(new RequeueResult(1, RunStatus.PAUSED));
    m.on(new RunEvent.Retry());

    m.on(new RunEvent.RetryEnded());

    assertThat(m.state.status()).isEqualTo(RunStatus.PAUSED);
    assertThat(m.state.paused()).isTrue();
    assertThat(m.state.pauseRecorded()).isTrue();
  }

  @Test
  void aRecordReopenedByTheApiRevivesTheRunWithTheStopAndCapItHolds() {
    Machine m = endedWaiting(RunStatus.FAILED);

    m.on(new RunEvent.RecordReopened(settings(RunStatus.RUNNING, 5, true, Instant.EPOCH)));

    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(m.state.stopping()).isTrue();
    assertThat(m.state.requestedCap()).isEqualTo(5);
    assertThat(m.state.capUnrecorded()).isTrue();
  }

  @Test
  void theWaitOfAnEndedRunEndsWhenItsWindowPasses() {
    Machine m = endedWaiting(RunStatus.FAILED);

    assertThat(m.on(new RunEvent.WaitOver("over"))).containsExactly(new Log("over"));
    assertThat(m.state.waitingForRetry()).isFalse();
  }

  @Test
  void anExecutionContinuedWhileEndedWaitsOnWithItsDeadline() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.FAILED)));
    RunCarryOver ended =
        new RunCarryOver(3, false, false, false, true, 10L, 10, 0L, 5, RunStatus.FAILED, 9L, 99L);
    m.on(new RunEvent.Continued(ended));

    assertThat(m.on(new RunEvent.ContinuedEnded(ended))).containsExactly(new PublishStatus());
    assertThat(m.state.status()).isEqualTo(RunStatus.FAILED);
    assertThat(m.state.retryDeadlineMillis()).isEqualTo(99L);
    assertThat(m.state.statusKnown()).isTrue();
  }

  @Test
  void anExecutionContinuedWhileEndedGoesOnIfItsRecordWasReopened() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING, null, true, Instant.EPOCH)));
    RunCarryOver ended =
        new RunCarryOver(3, false, false, false, true, 10L, 10, 0L, 5, RunStatus.STOPPED, 9L, 99L);
    m.on(new RunEvent.Continued(ended));

    m.on(new RunEvent.ContinuedEnded(ended));

    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(m.state.waitingForRetry()).isFalse();
    assertThat(m.state.stopping()).isTrue();
  }

  @Test
  void aCapSignalledAtTheBoundaryOfAnEndedRunAppliesOnlyAfterARetryWithIt() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.CapSignal(2));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.FAILED, 6, false, Instant.EPOCH)));
    RunCarryOver ended =
        new RunCarryOver(3, false, false, false, true, 10L, 10, 0L, 5, RunStatus.FAILED, 9L, 99L);
    m.on(new RunEvent.Continued(ended));

    assertThat(m.on(new RunEvent.ContinuedEnded(ended))).containsExactly(new PublishStatus());
    assertThat(m.state.slots().cap()).isEqualTo(6);
    assertThat(m.state.later().cap()).isEqualTo(2);
    assertThat(m.state.requestedCap()).isEqualTo(6);
  }

  @Test
  void aFreshExecutionOfAnEndedRunRetriesItWhenAskedTo() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.FAILED)));
    m.on(new RunEvent.Fresh());
    m.requeues.add(new RequeueResult(1, RunStatus.RUNNING));

    m.on(new RunEvent.RetryEnded());

    assertThat(m.state.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(m.state.statusKnown()).isTrue();
  }

  // Slots and lanes.

  private static final BatchResult DONE = new BatchResult(BatchOutcome.COMPLETED, 10);

  private static BatchRef batch(int number) {
    return new BatchRef(number, number * 10L, number * 10L + 9, 10);
  }

  /** A running run whose slots are counted against {@code cap}. */
  private static Machine runningWithCap(int cap) {
    Machine m = running();
    m.state = m.state.countedAgainst(cap);
    return m;
  }

  /** {@code m} after batches {@code from} to {@code to} were claimed and started. */
  private static List<RunCommand> claimAndStart(Machine m, int from, int to) {
    List<BatchRef> batches = new ArrayList<>();
    for (int number = from; number <= to; number++) {
      batches.add(batch(number));
    }
    m.claims.add(new ClaimResult(batches));
    return m.on(new RunEvent.FillSlots(m.facts()));
  }

  @Test
  void aNewRunsSlotsAreCountedAgainstItsEffectiveCapOnceLoaded() {
    Machine m = new Machine(RunState.initial(0));
    assertThat(m.state.slots()).isEqualTo(Slots.NONE);
    m.on(new RunEvent.Begin(RUN));

    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING, 6, false, Instant.EPOCH)));

    assertThat(m.state.slots().cap()).isEqualTo(6);
    assertThat(m.state.slots().isEmpty()).isTrue();
  }

  @Test
  void aClaimAsksForExactlyTheSlotsFreeAtEveryCapAndCountHeld() {
    for (int cap = 1; cap <= 4; cap++) {
      for (int held = 0; held <= cap + 1; held++) {
        Machine m = runningWithCap(cap);
        for (int number = 1; number <= held; number++) {
          holding(m, batch(number), number);
        }

        List<RunCommand> commands =
            RunTransitions.on(m.state, new RunEvent.FillSlots(m.facts())).commands();

        if (held < cap) {
          assertThat(commands)
              .as("cap %d, %d held", cap, held)
              .containsExactly(new RunCommand.Claim(cap - held, 0));
        } else {
          assertThat(commands).as("cap %d, %d held", cap, held).isEmpty();
        }
      }
    }
  }

  @Test
  void aClaimedBatchTakesTheLowestLaneNoBatchHoldsWhateverLanesAreHeld() {
    for (int heldLanes = 0; heldLanes < 16; heldLanes++) {
      Machine m = runningWithCap(5);
      int lowestFree = 5;
      for (int lane = 4; lane >= 1; lane--) {
        if ((heldLanes & (1 << (lane - 1))) != 0) {
          holding(m, batch(100 + lane), lane);
        } else {
          lowestFree = lane;
        }
      }

      Step step =
          RunTransitions.on(m.state, new RunEvent.Claimed(new ClaimResult(List.of(batch(1))), 1));

      assertThat(step.commands().get(0))
          .as("lanes held %s", m.state.slots().lanes().values())
          .isEqualTo(new RunCommand.StartBatch(batch(1), lowestFree));
      assertThat(step.state().slots().laneOf(1)).isEqualTo(lowestFree);
      assertThat(step.state().slots().held()).isEqualTo(m.state.slots().held() + 1);
    }
  }

  @Test
  void theBatchesOfOneClaimTakeTheFreeLanesInTheClaimsOrder() {
    Machine m = holding(runningWithCap(4), batch(50), 2);

    assertThat(claimAndStart(m, 1, 3))
        .containsExactly(
            new RunCommand.Claim(3, 0),
            new RunCommand.StartBatch(batch(1), 1),
            new RunCommand.StartBatch(batch(2), 3),
            new RunCommand.StartBatch(batch(3), 4));
    assertThat(m.state.slots().free()).isZero();
  }

  @Test
  void aClaimAnsweredWithMoreBatchesThanFreeSlotsHoldsThemAll() {
    // A repeated claim is answered with every batch its token holds in PostgreSQL.
    Machine m = runningWithCap(2);

    Step step =
        RunTransitions.on(
            m.state,
            new RunEvent.Claimed(new ClaimResult(List.of(batch(1), batch(2), batch(3))), 2));

    assertThat(step.commands())
        .startsWith(
            new RunCommand.StartBatch(batch(1), 1),
            new RunCommand.StartBatch(batch(2), 2),
            new RunCommand.StartBatch(batch(3), 3));
    assertThat(step.state().slots().held()).isEqualTo(3);
    assertThat(step.state().slots().free()).isZero();
  }

  @Test
  void aHeldClaimTakesNoSlot() {
    Machine m = runningWithCap(2);
    m.claims.add(claimHeldBy("brake"));

    m.on(new RunEvent.FillSlots(m.facts()));

    assertThat(m.state.slots().isEmpty()).isTrue();
  }

  @Test
  void aCompletedBatchKeepsItsSlotUntilItsEndIsHandledThenFreesExactlyItsLane() {
    Machine m = runningWithCap(3);
    claimAndStart(m, 7, 9);
    // Received but not yet handled: nothing is free.
    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).isEmpty();

    m.on(new RunEvent.BatchEnded(batch(8), DONE, null));

    assertThat(m.state.slots().lanes()).containsOnlyKeys(7, 9);
    assertThat(claimAndStart(m, 10, 10))
        .containsExactly(new RunCommand.Claim(1, 1), new RunCommand.StartBatch(batch(10), 2));
  }

  @Test
  void aBatchThatFailedForGoodFreesItsSlot() {
    Machine m = runningWithCap(2);
    claimAndStart(m, 1, 2);

    m.on(new RunEvent.BatchEnded(batch(1), null, "timeout"));

    assertThat(m.state.slots().lanes()).containsOnlyKeys(2);
    assertThat(m.state.slots().free()).isEqualTo(1);
  }

  @Test
  void theEndOfABatchThatHoldsNoSlotIsAnError() {
    Machine m = runningWithCap(2);

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> m.on(new RunEvent.BatchEnded(batch(1), DONE, null)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("batch 1 holds no slot");
  }

  @Test
  void aChainedBatchHandedBackHoldsItsChainsLane() {
    Machine m = runningWithCap(3);
    claimAndStart(m, 1, 3);
    BatchResult handoff =
        new BatchResult(BatchOutcome.COMPLETED, 10, 1, 10, batch(40), "boom", false);

    assertThat(m.on(new RunEvent.BatchEnded(batch(2), handoff, null)))
        .endsWith(new RunCommand.StartBatch(batch(40), 2));

    assertThat(m.state.slots().lanes()).containsOnlyKeys(1, 3, 40);
    assertThat(m.state.slots().laneOf(40)).isEqualTo(2);
  }

  @Test
  void aChainedBatchHandedBackKeepsItsLaneEvenOverALoweredCap() {
    // Its chain's slot is held in PostgreSQL; the chain, not a new claim, holds it.
    Machine m = runningWithCap(2);
    claimAndStart(m, 1, 2);
    m.on(new RunEvent.CapUpdate(1));
    BatchResult handoff =
        new BatchResult(BatchOutcome.COMPLETED, 10, 1, 10, batch(40), "boom", false);

    m.on(new RunEvent.BatchEnded(batch(2), handoff, null));

    assertThat(m.state.slots().laneOf(40)).isEqualTo(2);
    assertThat(m.state.slots().held()).isEqualTo(2);
    assertThat(m.state.slots().free()).isZero();
  }

  @Test
  void aChainedBatchHandedBackThatFailsNowFreesItsChainsSlot() {
    Machine m = runningWithCap(2);
    claimAndStart(m, 1, 2);
    BatchResult handoff =
        new BatchResult(BatchOutcome.COMPLETED, 10, 0, 0, batch(40), "boom", true);

    m.on(new RunEvent.BatchEnded(batch(2), handoff, null));

    assertThat(m.state.slots().lanes()).containsOnlyKeys(1);
  }

  @Test
  void loweringTheCapTakesNoSlotAwayButLeavesNoneFreeUntilUnderIt() {
    Machine m = runningWithCap(4);
    claimAndStart(m, 1, 4);

    m.on(new RunEvent.CapUpdate(2));
    assertThat(m.state.slots().held()).isEqualTo(4);
    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).isEmpty();

    m.on(new RunEvent.BatchEnded(batch(1), DONE, null));
    m.on(new RunEvent.BatchEnded(batch(2), DONE, null));
    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).isEmpty();

    m.on(new RunEvent.BatchEnded(batch(4), DONE, null));
    assertThat(claimAndStart(m, 5, 5))
        .containsExactly(new RunCommand.Claim(1, 1), new RunCommand.StartBatch(batch(5), 1));
  }

  @Test
  void raisingTheCapFreesSlotsAtOnce() {
    Machine m = runningWithCap(1);
    claimAndStart(m, 1, 1);
    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).isEmpty();

    m.on(new RunEvent.CapUpdate(3));

    assertThat(claimAndStart(m, 2, 3))
        .containsExactly(
            new RunCommand.Claim(2, 1),
            new RunCommand.StartBatch(batch(2), 2),
            new RunCommand.StartBatch(batch(3), 3));
  }

  @Test
  void aCapSignalChangesTheSlotsOnlyWhenTheLoopAppliesIt() {
    Machine m = runningWithCap(2);

    m.on(new RunEvent.CapSignal(5));
    assertThat(m.state.slots().cap()).isEqualTo(2);

    m.on(new RunEvent.Apply());
    assertThat(m.state.slots().cap()).isEqualTo(5);
  }

  @Test
  void theLoopWaitsWhileAnySlotIsHeldAndFinishesOnceEveryOneIsFree() {
    Machine m = runningWithCap(2);
    claimAndStart(m, 1, 2);
    m.state = allPlanned(pendingMay(m.state, false));
    RunEvent.Facts allPlanned = new RunEvent.Facts(false);

    assertThat(RunTransitions.next(m.state, allPlanned)).isEqualTo(RunTransitions.Move.WAIT);
    m.on(new RunEvent.BatchEnded(batch(2), DONE, null));
    assertThat(RunTransitions.next(m.state, allPlanned)).isEqualTo(RunTransitions.Move.WAIT);
    m.on(new RunEvent.BatchEnded(batch(1), DONE, null));
    assertThat(RunTransitions.next(m.state, allPlanned)).isEqualTo(RunTransitions.Move.FINISH);
  }

  @Test
  void anExecutionDueToContinueAsNewHandsOverOnlyOnceEverySlotIsFree() {
    Machine m = runningWithCap(1);
    claimAndStart(m, 1, 1);
    RunEvent.Facts due = new RunEvent.Facts(true);

    assertThat(RunTransitions.next(m.state, due)).isEqualTo(RunTransitions.Move.WAIT);
    m.on(new RunEvent.BatchEnded(batch(1), DONE, null));
    assertThat(RunTransitions.next(m.state, due)).isEqualTo(RunTransitions.Move.HAND_OVER);
  }

  // Progress and the loop's bookkeeping.

  @Test
  void aLoadedRunTakesTheProgressItsRecordHolds() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));

    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING, null, false, Instant.EPOCH)));

    assertThat(m.state.counts().startedAt()).isEqualTo(Instant.EPOCH);
    assertThat(m.state.counts().processedKeys()).isZero();
    assertThat(m.state.counts().totalKeys()).isNull();
    assertThat(m.state.counts().mayHavePending()).isTrue();
  }

  @Test
  void aContinuedExecutionTakesTheCarriedProgressAndClaimTokenButKeepsTheHigherKeyCount() {
    Machine m = new Machine(RunState.initial(0));
    m.on(new RunEvent.Begin(RUN));
    m.on(new RunEvent.Loaded(settings(RunStatus.RUNNING)));
    RunCarryOver carried =
        new RunCarryOver(3, false, false, false, true, 400L, 10, 0L, 5, null, null, null);

    m.on(new RunEvent.Continued(carried));

    assertThat(m.state.counts().claimSequence()).isEqualTo(5);
    assertThat(m.state.counts().totalKeys()).isEqualTo(400L);
    assertThat(m.state.counts().processedKeys()).isEqualTo(10);
    assertThat(m.state.counts().startedAt()).isEqualTo(Instant.EPOCH);
  }

  @Test
  void aStartedRunTakesItsStartTime() {
    Machine m = pending();
    Instant at = Instant.ofEpochSecond(42);

    m.on(new RunEvent.Started(at));

    assertThat(m.state.counts().startedAt()).isEqualTo(at);
  }

  @Test
  void eachClaimTakesTheNextTokenOfTheRun() {
    Machine m = runningWithCap(4);
    m.state =
        m.state.with(
            m.state
                .counts()
                .carried(
                    new RunCarryOver(
                        4, false, false, false, false, null, 0, 0L, 9, null, null, null)));

    assertThat(claimAndStart(m, 1, 2)).startsWith(new RunCommand.Claim(4, 9));
    m.claims.add(new ClaimResult(List.of()));
    m.state = pendingMay(m.state, true);
    m.on(new RunEvent.BatchEnded(batch(1), DONE, null));

    assertThat(m.on(new RunEvent.FillSlots(m.facts()))).startsWith(new RunCommand.Claim(3, 10));
    assertThat(m.state.counts().claimSequence()).isEqualTo(11);
  }

  @Test
  void aClaimBooksTheRunsHeldTimeAndWhenItsHoldBegan() {
    Machine m = runningWithCap(2);
    m.claims.add(new ClaimResult(List.of(), false, List.of("brake"), 500, 1_200, 99L));
    m.on(new RunEvent.FillSlots(m.facts()));
    assertThat(m.state.counts().throttledMillis()).isEqualTo(1_200);
    assertThat(m.state.counts().heldSinceMillis()).isEqualTo(99L);

    m.on(new RunEvent.Waited());
    m.claims.add(new ClaimResult(List.of(), false, List.of(), 0, 1_000, null));
    m.on(new RunEvent.FillSlots(m.facts()));

    // A booked figure never goes back; the hold is over.
    assertThat(m.state.counts().throttledMillis()).isEqualTo(1_200);
    assertThat(m.state.counts().heldSinceMillis()).isNull();
  }

  @Test
  void batchesStartedHereMakeTheExecutionDueToContinueAsNewAtItsBound() {
    Machine m = runningWithCap(2);
    RunState s = m.state;
    for (int started = 0; started < 1_000; started++) {
      assertThat(s.continueAsNewDue(false)).isFalse();
      s = s.with(s.counts().batchStarted());
    }
    assertThat(s.continueAsNewDue(false)).isTrue();
    assertThat(m.state.continueAsNewDue(true)).isTrue();

    claimAndStart(m, 1, 1);
    assertThat(m.state.counts().batchesStartedHere()).isEqualTo(1);
  }

  @Test
  void aHandedBackBatchCountsAsABatchStartedHere() {
    Machine m = runningWithCap(2);
    claimAndStart(m, 1, 1);
    BatchResult handoff =
        new BatchResult(BatchOutcome.COMPLETED, 10, 1, 10, batch(40), "boom", false);

    m.on(new RunEvent.BatchEnded(batch(1), handoff, null));

    assertThat(m.state.counts().batchesStartedHere()).isEqualTo(2);
  }

  @Test
  void aPlannedPageMakesBatchesClaimableOnlyIfItPlannedOrFoundSome() {
    for (int created = 0; created <= 1; created++) {
      for (int pending = -1; pending <= 1; pending++) {
        Machine m = running();
        m.state = pendingMay(m.state, false);

        m.on(new RunEvent.Planned(new PlanPage(created, false, null, pending), null, 0));

        assertThat(m.state.counts().mayHavePending())
            .as("created %d, pending %d", created, pending)
            .isEqualTo(created > 0 || pending > 0);
      }
    }
  }

  @Test
  void theLastPageOfThePlanGivesTheRunsKeyCountAndAFailedCallNone() {
    Machine m = running();

    m.on(new RunEvent.Planned(new PlanPage(3, false, null), null, 0));
    assertThat(m.state.counts().totalKeys()).isNull();
    m.on(new RunEvent.Planned(null, "boom", 0));
    assertThat(m.state.counts().totalKeys()).isNull();
    m.on(new RunEvent.Planned(new PlanPage(0, true, 400L), null, 0));
    assertThat(m.state.counts().totalKeys()).isEqualTo(400L);
  }

  @Test
  void refusedFinishesInARowWaitFromTheSecondOnUntilABatchEnds() {
    Machine m = running();
    for (int refused = 0; refused < 3; refused++) {
      m.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));
    }

    assertThat(m.on(new RunEvent.Finishing())).doesNotContain(new RunCommand.Sleep(5_000));
    assertThat(m.on(new RunEvent.Finishing())).contains(new RunCommand.Sleep(5_000));
    assertThat(m.state.counts().fruitlessFinishes()).isEqualTo(2);

    holding(m, batch(1), 1).on(new RunEvent.BatchEnded(batch(1), DONE, null));
    assertThat(m.state.counts().fruitlessFinishes()).isZero();
    assertThat(m.on(new RunEvent.Finishing())).doesNotContain(new RunCommand.Sleep(5_000));
  }

  @Test
  void aRefusedFinishThatRecoveredSlotsClaimsAgainAtOnce() {
    Machine m = running();
    m.state = pendingMay(m.state, false);
    m.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));
    m.finishes.add(new FinishResult(false, RunStatus.RUNNING, null));
    m.recovered.add(0);
    m.recovered.add(2);
    m.on(new RunEvent.Finishing());

    assertThat(m.on(new RunEvent.Finishing()))
        .containsExactly(
            new RunCommand.Finish(false),
            new RunCommand.RecoverSlots(),
            new Log("run 7: recovered 2 slots held by no live batch"),
            new RunCommand.HandOverIfDue());
    assertThat(m.state.counts().mayHavePending()).isTrue();
    assertThat(m.state.counts().fruitlessFinishes()).isEqualTo(1);
  }

  @Test
  void eachRetryReQueuesWithTheNextTokenOfTheExecution() {
    Machine m = running();
    m.requeues.add(new RequeueResult(1, RunStatus.RUNNING));
    m.requeues.add(new RequeueResult(0, RunStatus.RUNNING));

    m.on(new RunEvent.Retry());
    assertThat(m.on(new RunEvent.Apply())).contains(new Requeue(RunStatus.RUNNING, false, 0));
    m.on(new RunEvent.Retry());
    assertThat(m.on(new RunEvent.Apply())).contains(new Requeue(RunStatus.RUNNING, false, 1));
    assertThat(m.state.counts().requeues()).isEqualTo(2);
  }

  @Test
  void aRetryThatReQueuedMakesBatchesClaimableAndForgetsTheEndTime() {
    Machine m = running();
    m.state = pendingMay(m.state.with(m.state.counts().withFinishedAt(Instant.EPOCH)), false);
    m.requeues.add(new RequeueResult(1, RunStatus.RUNNING));

    m.on(new RunEvent.Retry());
    m.on(new RunEvent.Apply());

    assertThat(m.state.counts().mayHavePending()).isTrue();
    assertThat(m.state.counts().finishedAt()).isNull();
  }

  @Test
  void aRevivedRunForgetsItsEndTimeAndRefusedFinishes() {
    Machine m = endedWaiting(RunStatus.FAILED);
    m.state =
        pendingMay(
            m.state.with(m.state.counts().withFinishedAt(Instant.EPOCH).withFruitlessFinishes(3)),
            false);

    m.on(new RunEvent.RecordReopened(settings(RunStatus.RUNNING)));

    assertThat(m.state.counts().finishedAt()).isNull();
    assertThat(m.state.counts().fruitlessFinishes()).isZero();
    assertThat(m.state.counts().mayHavePending()).isTrue();
  }

  @Test
  void aLookAtFullSlotsThatSawNoNewsRecoversOrphanSlotsOnlyIfNothingHereHoldsOneOrPlans() {
    RunEvent look = new RunEvent.SlotsFullLookOver();
    Machine idle = running();
    assertThat(idle.on(look)).containsExactly(new RunCommand.RecoverOrphanSlots());

    Machine holding = holding(running(), B1, 1);
    assertThat(holding.on(look)).isEmpty();

    Machine planning = running();
    planning.state = planningUnderWay(planning.state);
    assertThat(planning.on(look)).isEmpty();
  }
}
