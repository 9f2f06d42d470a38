package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Instant;

/**
 * What a run's workflow knows of its run: its state ({@link #state}, which only {@link
 * RunTransitions} changes: lifecycle, the slots it holds — {@link Slots}, the run's semaphore — and
 * its progress, {@link RunCounts}, and the planning window ahead of the slots, {@link PlanWindow})
 * and the stub of the short database operations ({@link #runs}). One per execution, shared by the
 * workflow's parts — the engine that carries out the transitions' commands ({@link RunEngine}) and
 * the batches it runs ({@link BatchLanes}) — all in the workflow's threads. The run's record in
 * PostgreSQL is written only through {@link #runs}.
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
