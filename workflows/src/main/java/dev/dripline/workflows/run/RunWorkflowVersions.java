package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;

/**
 * The change ids of {@link BackfillRunWorkflowImpl}'s {@code Workflow.getVersion} calls: each names
 * a change to the commands the workflow emits that executions begun before it must not see, so that
 * their histories still replay. A change id, once released, is never renamed or removed while an
 * execution that recorded (or did not record) it may still be running.
 */
final class RunWorkflowVersions {
  /**
   * Change id: a stop or retry handled by a new execution before it loaded the run is kept (the
   * carried flags are added to it, not assigned over it), and a new execution of a live run goes on
   * with a stop its record holds.
   */
  static final String KEEP_EARLY_STOP_AND_RETRY = "keep-early-stop-retry";

  /**
   * Change id: each execution takes the effective cap from what {@code loadRun} returns (the
   * definition's cap, the run's requested cap and the engine's safety cap of the worker running
   * it), not from the carry-over, so a cap lowered by a redeploy binds from the next execution.
   */
  static final String CAP_FROM_SETTINGS = "cap-from-settings";

  /**
   * Change id: a claim that found the run's slots full in PostgreSQL — held by batches this
   * execution does not hold (of a lost execution, or attempts not yet stopped) — is tried again
   * after {@link BatchLanes#SLOTS_FULL_LOOK} or the next completion, instead of at once through
   * another planning call: the claims and planning calls would otherwise follow each other without
   * pause until those slots free.
   */
  static final String WAIT_FOR_FULL_SLOTS = "wait-for-full-slots";

  /**
   * Change id: when {@code finish} refuses with nothing of this execution in flight and no planning
   * under way, the slots PostgreSQL still shows held have no live holder here; the workflow asks
   * {@code recoverSlots} for them (those whose holder is provably dead) instead of only sleeping,
   * and checks for continue-as-new on that path too.
   */
  static final String RECOVER_ORPHAN_SLOTS = "recover-orphan-slots";

  /**
   * Change id: a retry while a stop is under way is ignored (and logged) — the stop's finish would
   * stop what it re-queued; retry the run once it has stopped — and a retry that raced the finish
   * applies to the run as it ended, whose stop is over.
   */
  static final String RETRY_IGNORED_WHILE_STOPPING = "retry-ignored-while-stopping";

  /**
   * Change id: the workflow of a run that ended failed or stopped stays open for a {@code retry}
   * signal (the Temporal CLI's or Web UI's as the API's) for {@code ended-run-retry-window},
   * instead of completing at once.
   */
  static final String ENDED_RUN_WAITS_FOR_RETRY = "ended-run-waits-for-retry";

  /**
   * Change id: a pause or resume signalled before the execution knew the run's status (delivered
   * ahead of the workflow method in a new execution, or after a retry that has not yet re-opened an
   * ended run) is applied once the status is known, instead of being dropped. Asked only when such
   * a signal came.
   */
  static final String EARLY_PAUSE_RESUME = "early-pause-resume";

  /**
   * Change id: the chains' pace is measured over {@link ChainPace#MIN_SPAN_MILLIS}, so the first
   * planning reports of a fast run size the plan-ahead window before the first look; executions
   * without the marker measure over {@link ChainPace#MIN_LOOK_MILLIS}, as they did. Asked at the
   * pace's first use, which a run without chains never reaches.
   */
  static final String EARLY_PACE = "early-pace";

  /**
   * Change id: a new execution that finds its run ended and a retry already asked for (a retry
   * Update or signal that started it) re-queues itself, as the API no longer does, instead of
   * completing at once.
   */
  static final String RETRY_OF_ENDED_RUN = "retry-of-ended-run";

  /**
   * Change id: a pending run — due now but not started yet, or scheduled — takes a pause at once
   * (recorded {@code paused}) and, paused, waits past its start time until resumed (R9); before, a
   * pause signalled while it waited was applied only once it had started.
   */
  static final String PAUSE_WHILE_PENDING = "pause-while-pending";

  /**
   * Change id: the run's record is made to agree with the workflow's pause wherever a status write
   * may have been lost or undone. A new execution whose carried pause differs from the status it
   * loaded records the carried one; a pause and a resume handled together record the status again
   * (a task that recorded one of them may have failed after its write, and been replayed with
   * both); and a pause or resume handled while the last requests before continue-as-new were
   * applied is recorded before the hand-over. Asked only when such a difference or pair came.
   */
  static final String PAUSE_RECONCILED = "pause-reconciled";

  /**
   * Change id: a claim that a hold kept from taking batches (the brake, a health check: P2, P3) is
   * tried again after its {@code lookAgainMillis} or the next news, instead of taking the empty
   * claim for the end of the pending batches. Asked only when a claim came back held.
   */
  static final String WAIT_WHILE_HELD = "wait-while-held";

  /**
   * Change id: a signal sent from outside Dripline — {@code stop}, {@code pause} or {@code resume}
   * without a {@link SignalOrigin}, {@code retry}, {@code setMaxParallelBatches} — and a {@code
   * retryRun} or {@code changeCap} Update without one are recorded in the audit trail ({@code
   * recordAudit}) as sent by {@code temporal}, once the workflow has taken or answered them. Asked
   * only when such a request came.
   */
  static final String AUDIT_TEMPORAL_SIGNALS = "audit-temporal-signals";

  /**
   * Whether this execution has change {@code changeId}: true in an execution that begins with it
   * (Temporal records the marker) and when replaying a history that recorded it; false when
   * replaying one from before it. Each call is a command of the workflow: where it is asked is part
   * of the change.
   */
  static boolean has(String changeId) {
    return Workflow.getVersion(changeId, Workflow.DEFAULT_VERSION, 1) != Workflow.DEFAULT_VERSION;
  }

  private RunWorkflowVersions() {}
}
