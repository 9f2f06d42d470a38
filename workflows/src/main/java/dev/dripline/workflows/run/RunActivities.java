package dev.dripline.workflows.run;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * Short, idempotent PostgreSQL operations on a run's records, called by the run workflow as local
 * activities. Every write is a compare-and-set, so a retried or replayed call changes nothing
 * twice.
 */
@ActivityInterface(namePrefix = "Run")
public interface RunActivities {

  /**
   * Loads the run's settings and counters; {@link RunSettings#found()} is false if deleted. Records
   * {@link RunSettings#effectiveCap()}, the cap the loading execution enforces, as the run's cap
   * when the record holds another (a redeploy changed the definition's or the engine's cap).
   */
  @ActivityMethod
  RunSettings loadRun(RunRef run);

  /**
   * Moves a pending run to running (compare-and-set), or to stopped if its record asks for a stop
   * (R2: the API recorded it while Temporal could not be reached); reports the status it found
   * otherwise.
   */
  @ActivityMethod
  StartResult markRunning(RunRef run);

  /**
   * Claims up to {@code limit} pending batches, lowest numbers first, marking them enqueued. A
   * repeated call with the same token returns the batches that token already claimed.
   */
  @ActivityMethod
  ClaimResult claimPending(ClaimRequest request);

  /**
   * Marks a batch whose attempts are exhausted as failed, releasing its slot; a batch its
   * activity's chain still held goes back to pending (failed once it has no attempts left of its
   * own).
   */
  @ActivityMethod
  void recordBatchFailure(BatchFailure failure);

  /**
   * Re-queues failed batches (and, for a stopped run, stopped ones) as pending with their error
   * cleared, re-opening an ended run as running.
   */
  @ActivityMethod
  RequeueResult requeue(RequeueRequest request);

  /** Records a change between running and paused. */
  @ActivityMethod
  void recordStatus(StatusChange change);

  /**
   * Records that the run is stopping, so batch activities chaining further batches stop taking them
   * (a re-queue clears it).
   */
  @ActivityMethod
  void recordStopRequested(RunRef run);

  /** Records a changed cap. */
  @ActivityMethod
  void recordCap(CapRecord record);

  /**
   * Records a signal sent to the run from outside Dripline in the audit trail (O4); a repeated call
   * with the same {@link AuditRecord#dedupKey} records nothing.
   */
  @ActivityMethod
  void recordAudit(AuditRecord record);

  /** Returns batches left enqueued or running by an execution that was terminated to pending. */
  @ActivityMethod
  int recoverSlots(RunRef run);

  /**
   * Ends the run if no batch is pending or holds a slot: stopped if stopping (pending batches
   * become stopped), failed if any batch failed or an error is given, else completed.
   */
  @ActivityMethod
  FinishResult finish(FinishRequest request);
}
