package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Instant;
import java.util.List;

/**
 * What a run's workflow knows of its run: the status it last recorded, its progress, the slots it
 * holds ({@link SlotBook}, the run's semaphore) and the planning window ahead of them ({@link
 * PlanWindow}). One per execution, shared by the workflow's parts — the requests it was sent
 * ({@link RunRequests}), the batches it runs ({@link BatchLanes}) and the wait of an ended run
 * ({@link EndedRunWait}) — all in the workflow's thread. The run's record in PostgreSQL is written
 * only through {@link #runs}.
 */
final class RunLedger {
  /** Short database operations; retried until the database answers (R12). */
  final RunActivities runs =
      Workflow.newLocalActivityStub(RunActivities.class, DatabaseLocalActivities.options());

  /** The slots this execution holds and the completions it has yet to handle. */
  final SlotBook slots = new SlotBook();

  long runId;
  RunSettings settings;
  RunStatus status = RunStatus.PENDING;

  /** The cap the run was given (null: none), before the definition's and the engine's bound it. */
  Integer requestedCap;

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

  /**
   * True while the run has ended (failed or stopped) and its workflow waits for a retry; a stop,
   * pause, resume or cap change then does not apply (see {@link RunRequests}).
   */
  boolean waitingForRetry;

  /** Until when (workflow time) an ended run's workflow waits for a retry. */
  Long retryDeadlineMillis;

  /** Why the last claim could not start a batch (the brake, check names); empty if none. */
  List<String> holds = List.of();

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
    return new RequeueRequest(runId, Workflow.getInfo().getRunId() + "/" + requeues++);
  }

  /** Takes what a claim found of the run's holds and its held time. */
  void takeHolds(ClaimResult claim) {
    holds = claim.holds() == null ? List.of() : claim.holds();
    throttledMillis = Math.max(throttledMillis, claim.throttledMillis());
    heldSinceMillis = claim.heldSinceMillis();
  }

  RunRef ref() {
    return new RunRef(runId);
  }

  /** Whether the run's record was found when the execution loaded it. */
  boolean found() {
    return settings != null && settings.found();
  }

  int effectiveCap() {
    return CapPolicy.effective(settings.definitionCap(), requestedCap, settings.engineSafetyCap());
  }

  /** Takes the run's cap from its requested one, bounded as deployed now. */
  void applyCap() {
    slots.setCap(effectiveCap());
  }

  /** Takes what a finish recorded: status, end time and PostgreSQL's count of processed keys. */
  void ended(FinishResult finish) {
    status = finish.status();
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

  boolean continueAsNewDue() {
    return batchesStartedHere >= settings.maxBatchesPerExecution()
        || Workflow.getInfo().isContinueAsNewSuggested();
  }

  /** What a new execution takes over; {@code ended} null for a live run. */
  RunCarryOver carryOver(
      boolean paused, boolean stopRequested, boolean retryRequested, RunStatus ended) {
    return new RunCarryOver(
        slots.cap(),
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
        ended == null ? null : retryDeadlineMillis);
  }

  /** Publishes the status as a search attribute and the details the Web UI shows. */
  void publishStatus() {
    Workflow.upsertTypedSearchAttributes(
        RunSearchAttributes.BACKFILL.valueSet(settings.backfill()),
        RunSearchAttributes.RUN_STATUS.valueSet(status.wire()));
    publishDetails();
  }

  void publishDetails() {
    Workflow.setCurrentDetails(
        RunText.details(
            status,
            progress(),
            slots.held(),
            slots.cap(),
            window.error(),
            waitingForRetry ? retryDeadlineMillis : null,
            holds,
            heldSinceMillis));
  }

  RunProgress progress() {
    return RunProgress.of(
        status,
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        Instant.ofEpochMilli(Workflow.currentTimeMillis()),
        throttledMillis,
        heldSinceMillis == null ? null : Instant.ofEpochMilli(heldSinceMillis));
  }
}
