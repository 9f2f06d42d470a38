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

  /**
   * The ended run's workflow begins to wait for a retry: takes {@link RunEvent.EndedWaitBegins}
   * with the workflow's time.
   */
  record AwaitRetry() implements RunCommand {}

  /** Reads the run's record; answered by {@link RunEvent.Loaded}. */
  record LoadRun() implements RunCommand {}

  /** Makes the batch and planning activities' options from the run's settings. */
  record ConfigureActivities() implements RunCommand {}

  /** Marks the pending run running; answered by {@link RunEvent.MarkedRunning}. */
  record MarkRunning() implements RunCommand {}

  /**
   * Asks PostgreSQL to finish the run stopped before it started; answered by {@link
   * RunEvent.StoppedBeforeStart}.
   */
  record StopBeforeStart() implements RunCommand {}

  /** Reads the ended run's record again; answered by {@link RunEvent.RecordRead}. */
  record LoadRecord() implements RunCommand {}

  /** What a wait ({@link Await}) waits for; {@link TurnRules#woken} judges it. */
  enum Until {
    /** A pending run: a stop, a retry Update to answer, or a pause or resume to take. */
    START,
    /** Before a live run's hand-over: a retry, or every handler finished. */
    HANDLERS,
    /** Before an ended run's hand-over: a retry, or every handler finished. */
    HANDLERS_WHILE_ENDED,
    /** An ended run: a retry. */
    RETRY,
    /** The workflow's end: a retry Update to answer, or every handler finished. */
    LAST_ANSWERS
  }

  /**
   * Waits until {@code until} comes true, for at most {@code timeoutMillis} (a workflow timer) if
   * it is above 0; answered by {@link RunEvent.Woke}.
   */
  record Await(Until until, long timeoutMillis) implements RunCommand {}

  /** Waits for a completion, a plan page or a request, as {@link LoopRules#waitFor} says. */
  record AwaitNews() implements RunCommand {}

  /** Continues as new, handing {@code carry} to the next execution. */
  record ContinueAsNew(RunCarryOver carry) implements RunCommand {}

  /**
   * After a refused finish with nothing in flight: recovers the slots held by no live batch;
   * answered by {@link RunEvent.SlotsRecovered}.
   */
  record RecoverSlots() implements RunCommand {}

  /** Recovers the slots of the run held by no live holder; no answer is needed. */
  record RecoverOrphanSlots() implements RunCommand {}

  /** Waits {@code millis} (a workflow timer) before the loop goes on. */
  record Sleep(long millis) implements RunCommand {}

  /**
   * Continues as new if due: takes {@link RunEvent.HandOverLook} with what the workflow knows now.
   */
  record HandOverIfDue() implements RunCommand {}

  /** Takes {@code event} holding the cap lock (cap changes are recorded one at a time). */
  record WithCapLock(RunEvent event) implements RunCommand {}

  /** Takes {@code event} next. */
  record Then(RunEvent event) implements RunCommand {}
}
