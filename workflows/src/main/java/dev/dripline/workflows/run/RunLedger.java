package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Instant;

/**
 * What a run's workflow knows of its run: its state ({@link #state}, which only {@link
 * RunTransitions} changes: lifecycle, the slots it holds — {@link Slots}, the run's semaphore — and
 * its progress, {@link RunCounts}, and the planning window ahead of the slots, {@link PlanWindow})
 * and the stub of the short database operations ({@link #runs}). One per execution, shared by the
 * workflow's parts — the engine that carries out the transitions' commands ({@link RunEngine}), the
 * batches it runs ({@link BatchLanes}), a pending run's start ({@link RunStart}) and the wait of an
 * ended run ({@link EndedRunWait}) — all in the workflow's threads. The run's record in PostgreSQL
 * is written only through {@link #runs}.
 */
final class RunLedger {
  /** Short database operations; retried until the database answers (R12). */
  final RunActivities runs =
      Workflow.newLocalActivityStub(RunActivities.class, DatabaseLocalActivities.options());

  /**
   * The run's state: status, holds, requests, the slots it holds and its progress ({@link
   * RunTransitions} makes each next one).
   */
  RunState state = RunState.initial(0);

  /**
   * The re-queue of this run with token {@code n}, unique to it (this execution's run id and the
   * counter the rules keep): deterministic, so a replayed call carries the token of the call it
   * repeats.
   */
  RequeueRequest requeueRequest(int n) {
    return new RequeueRequest(runId(), Workflow.getInfo().getRunId() + "/" + n);
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

  /** What the loop knows now that the state does not: Temporal's advice. */
  RunEvent.Facts facts() {
    return new RunEvent.Facts(Workflow.getInfo().isContinueAsNewSuggested());
  }

  boolean continueAsNewDue() {
    return state.continueAsNewDue(Workflow.getInfo().isContinueAsNewSuggested());
  }

  /** What a new execution takes over; {@code ended} null for a live run. */
  RunCarryOver carryOver(
      boolean paused, boolean stopRequested, boolean retryRequested, RunStatus ended) {
    RunCounts counts = state.counts();
    return new RunCarryOver(
        state.slots().cap(),
        paused,
        stopRequested,
        retryRequested,
        state.window().done(),
        counts.totalKeys(),
        counts.processedKeys(),
        counts.startedAt() == null ? null : counts.startedAt().toEpochMilli(),
        counts.claimSequence(),
        ended,
        ended == null || counts.finishedAt() == null ? null : counts.finishedAt().toEpochMilli(),
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
            state.window().error(),
            state.waitingForRetry() ? state.retryDeadlineMillis() : null,
            state.claimHolds(),
            state.counts().heldSinceMillis()));
  }

  RunProgress progress() {
    RunCounts counts = state.counts();
    return RunProgress.of(
        status(),
        counts.totalKeys(),
        counts.processedKeys(),
        counts.startedAt(),
        counts.finishedAt(),
        Instant.ofEpochMilli(Workflow.currentTimeMillis()),
        counts.throttledMillis(),
        counts.heldSinceMillis() == null ? null : Instant.ofEpochMilli(counts.heldSinceMillis()));
  }
}
