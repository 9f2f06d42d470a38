package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Instant;

/**
 * What a run's workflow knows of its run: its lifecycle ({@link #state}, which only {@link
 * RunTransitions} changes, with the slots it holds: {@link Slots}, the run's semaphore), its
 * progress and the planning window ahead of them ({@link PlanWindow}). One per execution, shared by
 * the workflow's parts — the engine that carries out the transitions' commands ({@link RunEngine}),
 * the batches it runs ({@link BatchLanes}), a pending run's start ({@link RunStart}) and the wait
 * of an ended run ({@link EndedRunWait}) — all in the workflow's threads. The run's record in
 * PostgreSQL is written only through {@link #runs}.
 */
final class RunLedger {
  /** Short database operations; retried until the database answers (R12). */
  final RunActivities runs =
      Workflow.newLocalActivityStub(RunActivities.class, DatabaseLocalActivities.options());

  /**
   * The run's lifecycle: status, holds, requests and the slots it holds ({@link RunTransitions}
   * makes each next one).
   */
  RunState state = RunState.initial(0);

  Long totalKeys;
  long processedKeys;
  Instant startedAt;
  Instant finishedAt;

  /** Planning calls, their sizes and the window kept ahead of the chains ({@link BatchLanes}). */
  PlanWindow window;

  /** False once a claim found no pending batch; a plan page, retry or revival sets it again. */
  boolean mayHavePending = true;

  /** The next claim token, unique across executions. */
  long claimSequence;

  int batchesStartedHere;

  /** Refused finishes in a row, with nothing in flight: the second and later ones wait. */
  int fruitlessFinishes;

  /** The run's held time that has ended, as its last claim booked it. */
  long throttledMillis;

  /** When the hold the last claim found began (the database's clock); null if none. */
  Long heldSinceMillis;

  /** Re-queues this execution has asked for: part of each one's token. */
  private int requeues;

  /**
   * The next re-queue of this run, with a token unique to it (this execution's run id and a
   * counter): deterministic, so a replayed call carries the token of the call it repeats.
   */
  RequeueRequest requeueRequest() {
    return new RequeueRequest(runId(), Workflow.getInfo().getRunId() + "/" + requeues++);
  }

  /** Takes what a claim found of the run's held time (its holds are the state's). */
  void takeHeldTime(ClaimResult claim) {
    throttledMillis = Math.max(throttledMillis, claim.throttledMillis());
    heldSinceMillis = claim.heldSinceMillis();
  }

  long runId() {
    return state.runId();
  }

  RunRef ref() {
    return new RunRef(state.runId());
  }

  /** The run's record as this execution loaded it. */
  RunSettings settings() {
    return state.settings();
  }

  RunStatus status() {
    return state.status();
  }

  /** Takes what a finish recorded: end time and PostgreSQL's count of processed keys. */
  void ended(FinishResult finish) {
    finishedAt = finish.finishedAt();
    takeProcessedKeys(finish);
  }

  /**
   * Takes PostgreSQL's count of processed keys from a finished run's record: the count this
   * workflow adds up from batch results falls short when a worker died mid-chain (its retried
   * attempt reports only what it completed itself).
   */
  void takeProcessedKeys(FinishResult finish) {
    if (finish.processedKeys() != null) {
      processedKeys = finish.processedKeys();
    }
  }

  /** What the loop knows now of the batches in flight and the planning ahead of them. */
  RunEvent.Facts facts() {
    return new RunEvent.Facts(window.underWay(), window.over(), mayHavePending, continueAsNewDue());
  }

  /** What the loop knows when it waits for news. */
  RunEvent.WaitFacts waitFacts() {
    return new RunEvent.WaitFacts(window.keepsAhead(state.stopping()), window.underWay());
  }

  /**
   * Takes a page of the plan into the window: batches may be pending to claim when it planned or
   * found some; once every key is in a batch, the run's key count is the plan's.
   */
  void takePage(PlanPage page) {
    if (window.takePage(page, Workflow.currentTimeMillis(), state.slots().cap())) {
      mayHavePending = true;
    }
    if (page.done()) {
      totalKeys = page.totalKeys();
    }
  }

  boolean continueAsNewDue() {
    return batchesStartedHere >= settings().maxBatchesPerExecution()
        || Workflow.getInfo().isContinueAsNewSuggested();
  }

  /** What a new execution takes over; {@code ended} null for a live run. */
  RunCarryOver carryOver(
      boolean paused, boolean stopRequested, boolean retryRequested, RunStatus ended) {
    return new RunCarryOver(
        state.slots().cap(),
        paused,
        stopRequested,
        retryRequested,
        window.done(),
        totalKeys,
        processedKeys,
        startedAt == null ? null : startedAt.toEpochMilli(),
        claimSequence,
        ended,
        ended == null || finishedAt == null ? null : finishedAt.toEpochMilli(),
        ended == null ? null : state.retryDeadlineMillis());
  }

  /** Publishes the status as a search attribute and the details the Web UI shows. */
  void publishStatus() {
    Workflow.upsertTypedSearchAttributes(
        RunSearchAttributes.BACKFILL.valueSet(settings().backfill()),
        RunSearchAttributes.RUN_STATUS.valueSet(status().wire()));
    publishDetails();
  }

  void publishDetails() {
    Workflow.setCurrentDetails(
        RunText.details(
            status(),
            progress(),
            state.slots().held(),
            state.slots().cap(),
            window.error(),
            state.waitingForRetry() ? state.retryDeadlineMillis() : null,
            state.claimHolds(),
            heldSinceMillis));
  }

  RunProgress progress() {
    return RunProgress.of(
        status(),
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        Instant.ofEpochMilli(Workflow.currentTimeMillis()),
        throttledMillis,
        heldSinceMillis == null ? null : Instant.ofEpochMilli(heldSinceMillis));
  }
}
