package dev.dripline.workflows.run;

/**
 * Where a run's workflow execution is ({@link RunState#phase}): what its next turn ({@link
 * RunEvent.Turn}) does, as {@link TurnRules} decides. A phase whose work reads what only the
 * workflow knows then (the time, whether every handler has finished) after commands of its own is
 * two phases, so that its second part is judged at a turn of its own, with what is known then.
 */
enum RunPhase {
  /** The execution has begun: it reads its run's record. */
  LOADING,
  /** The record is read: the execution goes where it and the carry-over say. */
  OPENING,
  /** A pending run waits for its start time (R2): it takes a pause or resume asked meanwhile… */
  PENDING,
  /** …then starts if due and not paused (R9), or waits for its start time or a request. */
  PENDING_LOOK,
  /** The loop: it applies requests, fills free slots and keeps the plan ahead… */
  LIVE,
  /** …then finishes the run, continues as new, or waits for news. */
  LIVE_NEXT,
  /** Before a live run's continue-as-new: waits for a retry or for every handler, applies… */
  HANDING_OVER,
  /** …then hands over once every handler has finished and the pause is recorded. */
  HANDING_OVER_LOOK,
  /** The run ended failed or stopped and its workflow waits for a retry: a retry is applied… */
  ENDED,
  /** …then the wait goes on, its window passes, or the execution continues as new. */
  ENDED_LOOK,
  /** The run's work is done: retries asked meanwhile are answered, and handlers finish. */
  DONE,
  /** The workflow method returns the run's outcome. */
  OVER
}
