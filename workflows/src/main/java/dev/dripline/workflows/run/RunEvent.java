package dev.dripline.workflows.run;

import java.time.Instant;

/**
 * Something that happened to a run's workflow, as {@link RunTransitions} takes it: an operator's
 * request (a signal or an Update), a step of the workflow's loop, or the answer of a command it
 * carried out. The workflow turns Temporal's inputs into these and nothing else.
 */
sealed interface RunEvent {

  // Operators' requests, by signal or Update.

  /** Stop the run (R7). */
  record Stop() implements RunEvent {}

  /** Retry the run (R8); an Update's answer is given where the retry is applied. */
  record Retry() implements RunEvent {}

  /** Pause the run (R9). */
  record Pause() implements RunEvent {}

  /** Resume the paused run. */
  record Resume() implements RunEvent {}

  /** A cap change by signal: applied by the loop. */
  record CapSignal(int maxParallelBatches) implements RunEvent {}

  /** A cap change by Update, taken once the run is loaded, holding the cap lock. */
  record CapUpdate(int maxParallelBatches) implements RunEvent {}

  /** A cap change by Update has been recorded. */
  record CapUpdated(int requestedCap, int effectiveCap) implements RunEvent {}

  // The start of an execution.

  /**
   * The workflow method of an execution for run {@code runId} begins, with what the execution
   * before it carried over ({@code carried}; null for a fresh execution).
   */
  record Begin(long runId, RunCarryOver carried) implements RunEvent {
    Begin(long runId) {
      this(runId, null);
    }
  }

  /**
   * The workflow takes its next turn: what it does is the phase's ({@link RunState#phase}, {@link
   * TurnRules}), judged with what the workflow knows now.
   */
  record Turn(Facts facts) implements RunEvent {}

  /**
   * A wait ({@link RunCommand.Await}) for {@code until} is over: {@code news} if its condition came
   * true before its timeout; {@code facts} as the workflow knows them then.
   */
  record Woke(RunCommand.Until until, boolean news, Facts facts) implements RunEvent {}

  /**
   * A fresh execution has taken the status it loaded: it goes to the run's start, its end or the
   * loop.
   */
  record Enter() implements RunEvent {}

  /** An execution continued while its run had ended waits on for a retry, unless re-opened. */
  record EnterEnded() implements RunEvent {}

  /**
   * A retry of an ended run was applied: re-opened, the run goes on; gone or with nothing to
   * re-queue, the workflow completes, unless it waits for a retry on.
   */
  record RetryOfEndedTaken() implements RunEvent {}

  /** The execution is due to continue as new, if {@code facts} say so. */
  record HandOverLook(Facts facts) implements RunEvent {}

  /** The execution read the run's record ({@code loadRun}); not found if deleted. */
  record Loaded(RunSettings settings) implements RunEvent {}

  /** A first execution, or one started anew (no carry-over), takes the status it loaded. */
  record Fresh() implements RunEvent {}

  /** A new execution of a live run whose slots were recovered: it goes on from its record. */
  record LiveAgain() implements RunEvent {}

  /** An execution continued as new takes over what the one before it carried. */
  record Continued(RunCarryOver carried) implements RunEvent {}

  /** An execution continued as new while its run had ended and waited for a retry. */
  record ContinuedEnded(RunCarryOver carried) implements RunEvent {}

  /** The run's status is known and the loop begins. */
  record Ready() implements RunEvent {}

  /** A pause or resume kept for later applies now. */
  record ApplyLater() implements RunEvent {}

  // The loop.

  /** The loop applies what was asked: the stop first, then the retry, the cap and the pause. */
  record Apply() implements RunEvent {}

  /** The retry step of {@link Apply}. */
  record ApplyRetry() implements RunEvent {}

  /** The cap step of {@link Apply}. */
  record ApplyCap() implements RunEvent {}

  /** The cap step, holding the cap lock. */
  record CapApplied() implements RunEvent {}

  /** The pause step of {@link Apply}. */
  record ApplyPause() implements RunEvent {}

  /** A re-queue of the live run answered; {@code before} is the status it was asked in. */
  record Requeued(RequeueResult result, RunStatus before) implements RunEvent {}

  /**
   * What the workflow knows that the state does not when it decides.
   *
   * @param continueAsNewSuggested Temporal suggests this execution continue as new
   * @param nowMillis the workflow's time
   * @param everyHandlerFinished no signal or Update handler is still running
   * @param retryAnswersOwed a retry Update waits for its answer
   */
  record Facts(
      boolean continueAsNewSuggested,
      long nowMillis,
      boolean everyHandlerFinished,
      boolean retryAnswersOwed) {
    Facts(boolean continueAsNewSuggested) {
      this(continueAsNewSuggested, 0, true, false);
    }
  }

  /** The loop fills free slots: claims pending batches, or plans when none may be left. */
  record FillSlots(Facts facts) implements RunEvent {}

  /** A claim for {@code asked} slots answered: what holds the run now, and the batches to start. */
  record Claimed(ClaimResult claim, int asked) implements RunEvent {}

  /** A claim took fewer batches than asked; {@code slotsFull} if the run's slots were full. */
  record ClaimedFewer(boolean slotsFull) implements RunEvent {}

  /**
   * A batch activity ended, its outcome handled in the loop: {@code result} if it completed, else
   * {@code error}, why it failed for good. Its slot is free from now on.
   */
  record BatchEnded(BatchRef batch, BatchResult result, String error) implements RunEvent {}

  /**
   * A planning call answered: {@code page}, the next page of the plan, or {@code failure}, why
   * planning failed for good; handled at {@code nowMillis} (workflow time).
   */
  record Planned(PlanPage page, String failure, long nowMillis) implements RunEvent {}

  /** The loop asks for the next page of the plan, if planning may go on. */
  record PlanNext() implements RunEvent {}

  /** The loop filled its slots: planning keeps ahead of the chains if the window runs low. */
  record KeepAhead() implements RunEvent {}

  /** The loop looked at the run's news: it has seen them. */
  record NewsSeen() implements RunEvent {}

  /** The look after a claim that found the run's slots full passed with no news. */
  record SlotsFullLookOver() implements RunEvent {}

  /** The loop waited for news: the looks the last claim asked for are over. */
  record Waited() implements RunEvent {}

  /** Nothing is in flight and the run may end: ask PostgreSQL to finish it. */
  record Finishing() implements RunEvent {}

  /** {@code finish} answered. */
  record Finished(FinishResult finish) implements RunEvent {}

  /** {@link RunCommand.RecoverSlots} answered: {@code recovered} slots whose holder was dead. */
  record SlotsRecovered(int recovered) implements RunEvent {}

  /** The run ended at its finish: its workflow completes, or waits for a retry. */
  record EndedAtFinish() implements RunEvent {}

  // A pending run.

  /** A pending run takes the pause or resume asked while it waits for its start. */
  record PendingPauseAsked() implements RunEvent {}

  /** A retry of a pending run is refused: it has no batches yet. */
  record PendingRetryRefused() implements RunEvent {}

  /** A pending run started (its record moved to running) at {@code startedAt}. */
  record Started(Instant startedAt) implements RunEvent {}

  /** {@link RunCommand.MarkRunning} answered: the run started, or what it is instead. */
  record MarkedRunning(StartResult start) implements RunEvent {}

  /** {@link RunCommand.StopBeforeStart} answered: what {@code finish} recorded. */
  record StoppedBeforeStart(FinishResult finish) implements RunEvent {}

  /**
   * A run stopped before it started has ended: its workflow waits for a retry if the stop was
   * {@code recorded} (the run is not gone) and ended runs wait.
   */
  record EndedBeforeStart(boolean recorded) implements RunEvent {}

  // The end.

  /**
   * The run ended as {@code status} before it started (null: the run is gone): stopped, with what
   * {@code finish} recorded, or found ended by its start ({@code finish} null).
   */
  record Ended(RunStatus status, FinishResult finish) implements RunEvent {}

  /** The ended run's workflow begins to wait for a retry, at {@code nowMillis} (workflow time). */
  record EndedWaitBegins(long nowMillis) implements RunEvent {}

  /** A retry of the ended run is applied. */
  record RetryEnded() implements RunEvent {}

  /** A re-queue of the ended run answered. */
  record EndedRequeued(RequeueResult result) implements RunEvent {}

  /** A look at the ended run's record found it re-opened. */
  record RecordReopened(RunSettings record) implements RunEvent {}

  /** {@link RunCommand.LoadRecord} answered: the ended run's record as it is now. */
  record RecordRead(RunSettings record) implements RunEvent {}

  /** The ended run's workflow stops waiting: the run is gone, or its retry window passed. */
  record WaitOver(String reason) implements RunEvent {}
}
