package dev.dripline.workflows.run;

/**
 * Something {@link RunTransitions} decided the run's workflow must do, carried out in the order
 * given: a write to the run's record, an answer to an Update, what the workflow publishes, or a
 * further event to take. A command whose answer matters (a re-queue) makes the workflow take that
 * answer as an event before the next command.
 */
sealed interface RunCommand {

  /** Logs {@code message} (info). */
  record Log(String message) implements RunCommand {}

  /** Logs {@code message} as a warning. */
  record Warn(String message) implements RunCommand {}

  /** Records that the run is stopping, so chains take no further batch. */
  record RecordStop() implements RunCommand {}

  /** Records the run's status (running, paused, or pending again). */
  record RecordStatus(RunStatus status) implements RunCommand {}

  /** Records the run's requested and effective caps. */
  record RecordCap(int requestedCap, int effectiveCap) implements RunCommand {}

  /**
   * Re-queues the run's failed (and, stopped, its stopped) batches, with this execution's re-queue
   * token {@code token}; answered by {@link RunEvent.Requeued} for a live run ({@code before} its
   * status), {@link RunEvent.EndedRequeued} for an ended one.
   */
  record Requeue(RunStatus before, boolean ended, int token) implements RunCommand {}

  /** Answers every retry Update waiting. */
  record AnswerRetries(RetryAnswer answer) implements RunCommand {}

  /** Answers the cap Update being taken. */
  record AnswerCap(CapAnswer answer) implements RunCommand {}

  /** Publishes the status (a search attribute) and the details. */
  record PublishStatus() implements RunCommand {}

  /** Publishes the details the Web UI shows. */
  record PublishDetails() implements RunCommand {}

  /**
   * Claims up to {@code free} pending batches with claim token {@code token}; answered by {@link
   * RunEvent.Claimed}.
   */
  record Claim(int free, long token) implements RunCommand {}

  /**
   * Starts a batch activity for {@code batch} in {@code lane}, whose slot the state holds for it: a
   * claimed batch takes the lowest free lane, a chained batch handed back its chain's.
   */
  record StartBatch(BatchRef batch, int lane) implements RunCommand {}

  /** Records that {@code batch} failed for good ({@code error}), releasing its slot. */
  record RecordBatchFailure(int batch, String error) implements RunCommand {}

  /**
   * Plans the next page if planning may: takes {@link RunEvent.PlanNext}, whose rule decides
   * ({@link PlanRules#planNext}).
   */
  record PlanNextPage() implements RunCommand {}

  /**
   * Starts the planning call {@code request} in the background; answered by {@link
   * RunEvent.Planned}.
   */
  record StartPlanning(PlanRequest request) implements RunCommand {}

  /** Fills free slots again: takes {@link RunEvent.FillSlots} with what the loop knows now. */
  record Fill() implements RunCommand {}

  /** Asks PostgreSQL to finish the run; answered by {@link RunEvent.Finished}. */
  record Finish(boolean stopping) implements RunCommand {}

  /** The workflow completes with the run's outcome. */
  record Complete() implements RunCommand {}

  /** The ended run's workflow waits for a retry; it completes if none re-opens the run. */
  record AwaitRetry() implements RunCommand {}

  /**
   * After a refused finish with nothing in flight: recovers the slots held by no live batch;
   * answered by {@link RunEvent.SlotsRecovered}.
   */
  record RecoverSlots() implements RunCommand {}

  /** Recovers the slots of the run held by no live holder; no answer is needed. */
  record RecoverOrphanSlots() implements RunCommand {}

  /** Waits {@code millis} (a workflow timer) before the loop goes on. */
  record Sleep(long millis) implements RunCommand {}

  /** Continues as new if due. */
  record HandOverIfDue() implements RunCommand {}

  /** Takes {@code event} holding the cap lock (cap changes are recorded one at a time). */
  record WithCapLock(RunEvent event) implements RunCommand {}

  /** Takes {@code event} next. */
  record Then(RunEvent event) implements RunCommand {}
}
