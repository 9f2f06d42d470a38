package dev.dripline.workflows.targets;

import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.DatabaseLocalActivities;
import dev.dripline.workflows.run.RunOutcome;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.RunWorkflowStart;
import io.temporal.activity.ActivityOptions;
import io.temporal.api.enums.v1.ParentClosePolicy;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.slf4j.Logger;

/**
 * The controlling workflow of one target. It keeps nothing of its own between iterations: every
 * iteration reloads the target's PostgreSQL record (the source of truth, which the API changes too
 * before signalling {@link #wake}) and takes the one step that the recorded state calls for. The
 * streak and backoff arithmetic lives in the activities, through {@link TargetTransitions}; the
 * workflow only supplies the jitter draws of run failures and of the wait after a lost capacity
 * race from {@code Workflow.newRandom()}, and waits.
 *
 * <p>The target's run is started as an abandoned child workflow and never awaited: the target polls
 * the run's record instead, which keeps working across continue-as-new and worker restarts. After a
 * run failure the next planning attempt retries that run (a new execution of the same run
 * workflow), so the same child id is started again.
 *
 * <p>Planning runs under a Temporal retry policy ({@link #planningRetryOptions}): one activity
 * attempt takes capacity and plans, and a failed attempt records its failure and tells Temporal to
 * retry after exactly the target's backoff, so the Web UI's pending activity shows the attempt and
 * the next retry. A lost capacity race is an answer, not a failure.
 */
public class TargetWorkflowImpl implements TargetWorkflow {
  private static final Logger log = Workflow.getLogger(TargetWorkflowImpl.class);

  /** Iterations per execution before continuing as new, to keep history bounded. */
  static final int MAX_ITERATIONS_PER_EXECUTION = 500;

  /** Attempts of one live-drain call before the workflow waits a poll interval and tries again. */
  static final int LIVE_DRAIN_ATTEMPTS = 5;

  /**
   * How long a needs_resync target waits for a wake before looking at its record again anyway, so a
   * replan whose wake signal was lost is still noticed.
   */
  static final Duration RESYNC_RECHECK = Duration.ofHours(1);

  /** Used until the first load tells the engine's settings (and if a record carries none). */
  static final TargetSettings DEFAULT_SETTINGS =
      new TargetSettings(30_000, 1_800_000, 5_000, 5_000, 100);

  /** Short database operations: retried until the database answers. */
  private final TargetRecordActivities db =
      Workflow.newLocalActivityStub(
          TargetRecordActivities.class, DatabaseLocalActivities.options());

  /**
   * Transient faults are retried a few times; a permanent live-batch failure is handled inside the
   * activity (the target goes to needs_resync and the call returns normally).
   */
  private final LiveBatchActivities live =
      Workflow.newActivityStub(
          LiveBatchActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofMinutes(5))
              .setSummary("apply queued live batches in arrival order")
              .setRetryOptions(
                  RetryOptions.newBuilder()
                      .setInitialInterval(Duration.ofSeconds(1))
                      .setBackoffCoefficient(2)
                      .setMaximumInterval(Duration.ofSeconds(30))
                      .setMaximumAttempts(LIVE_DRAIN_ATTEMPTS)
                      .setDoNotRetry(TargetFailure.LIVE_BATCH_FAILED.name())
                      .build())
              .build());

  private String name;
  private TargetRef ref;
  private Random random;
  private TargetSnapshot last;
  private boolean woken;
  private boolean replanRequested;

  @Override
  public void run(TargetRef target) {
    name = target.name();
    ref = new TargetRef(name);
    random = Workflow.newRandom();
    Workflow.upsertTypedSearchAttributes(RunSearchAttributes.TARGET.valueSet(name));
    Workflow.setCurrentDetails("starting");
    for (int iteration = 0; ; iteration++) {
      if (iteration >= MAX_ITERATIONS_PER_EXECUTION
          || (iteration > 0 && Workflow.getInfo().isContinueAsNewSuggested())) {
        continueAsNew(target, iteration);
      }
      if (replanRequested) {
        replanRequested = false;
        applyReplan();
      }
      // Cleared before the load: a wake that arrives after it means the record changed since.
      woken = false;
      TargetSnapshot t = db.load(ref);
      remember(t);
      if (!t.found()) {
        log.info("target {} no longer exists; its workflow ends", name);
        Workflow.setCurrentDetails("deleted");
        return;
      }
      try {
        step(t);
      } catch (ActivityFailure failure) {
        // Never give up on a target because of one failed call: look again after a poll interval.
        log.warn("target {}: {}; trying again later", name, describe(failure));
        awaitWake(settings().pollMillis());
      }
    }
  }

  /** Takes the one step the recorded state calls for; returns when it is time to reload. */
  private void step(TargetSnapshot t) {
    if (t.state() == null) {
      log.warn("target {} has no state; waiting", name);
      awaitWake(settings().pollMillis());
      return;
    }
    switch (t.state()) {
      case PENDING_BACKFILL -> pendingBackfill(t);
      case BACKFILLING -> backfilling(t);
      case PRIMED -> primed(t);
      case NEEDS_RESYNC -> awaitWake(RESYNC_RECHECK.toMillis());
    }
  }

  private void pendingBackfill(TargetSnapshot t) {
    if (t.nextAttemptAt() != null) {
      long wait = t.nextAttemptAt().toEpochMilli() - Workflow.currentTimeMillis();
      if (wait > 0) {
        // The backoff is the record's own timestamp; after waiting, reload in case it changed.
        awaitWake(wait);
        return;
      }
    }
    attemptPlanning();
  }

  private void backfilling(TargetSnapshot t) {
    if (t.currentRunId() == null) {
      // Capacity is held but no run was recorded (e.g. a crash between acquiring and planning).
      attemptPlanning();
      return;
    }
    TargetSnapshot observed =
        db.observeRun(new RunObservation(name, t.currentRunId(), random.nextDouble()));
    remember(observed);
    if (observed.found()
        && observed.state() == TargetState.BACKFILLING
        && t.currentRunId().equals(observed.currentRunId())) {
      awaitWake(settings().pollMillis());
    }
  }

  private void primed(TargetSnapshot t) {
    if (t.queuedLiveBatches() <= 0) {
      // Nothing queued: the API wakes the workflow when a live batch arrives; poll as a backstop.
      awaitWake(settings().pollMillis());
      return;
    }
    LiveDrain drain =
        live.applyLiveBatches(new LiveDrainRequest(name, settings().liveBatchesPerDrain()));
    remember(drain.target());
    if (drain.remaining() > 0 && drain.target().state() == TargetState.PRIMED) {
      return;
    }
    if (drain.target().state() == TargetState.PRIMED) {
      awaitWake(settings().pollMillis());
    }
  }

  /**
   * Planning under the retry policy: calls {@link TargetPlanningActivities#attemptPlanning} — whose
   * failed attempts Temporal retries after the target's backoff — until it plans a run (started
   * here), the target gets no capacity now (a neutral wait, T2), or planning ends for good. A
   * replan, or a wake whose record shows the target moved on (deleted, or replanned by the API
   * while the call waits for a retry), cancels the call, retry wait included; the loop then
   * reloads.
   */
  private void attemptPlanning() {
    TargetPlanningActivities planning =
        Workflow.newActivityStub(TargetPlanningActivities.class, planningOptions());
    List<Promise<PlanningAttempt>> call = new ArrayList<>(1);
    CancellationScope scope =
        Workflow.newCancellationScope(
            () -> call.add(Async.function(planning::attemptPlanning, ref)));
    scope.run();
    Promise<PlanningAttempt> attempt = call.get(0);
    awaitPlanningUnlessSuperseded(attempt, scope);
    PlanningAttempt result;
    try {
      result = attempt.get();
    } catch (ActivityFailure failure) {
      if (failure.getCause() instanceof CanceledFailure) {
        log.info("target {}: planning cancelled: the target moved on", name);
        return;
      }
      if (isType(failure, TargetFailure.TARGET_SUPERSEDED)
          || isType(failure, TargetFailure.PREVIOUS_RUN_ACTIVE)) {
        // An operator's action, not a planning failure: streak-neutral (T8). Look again shortly.
        log.info("target {}: planning deferred: {}", name, describe(failure));
        awaitWake(settings().capacityRetryMillis());
        return;
      }
      if (isType(failure, TargetFailure.TARGET_PLANNING_PERMANENT)) {
        // Recorded by the attempt: needs_resync. The reload finds it.
        log.warn("target {}: planning failed permanently: {}", name, describe(failure));
        return;
      }
      throw failure;
    } catch (CanceledFailure cancelled) {
      log.info("target {}: planning cancelled: the target moved on", name);
      return;
    }
    remember(result.target());
    if (result.run() != null) {
      startRun(result.run());
      return;
    }
    TargetSnapshot t = result.target();
    if (t.found()
        && t.state() == TargetState.PENDING_BACKFILL
        && (t.nextAttemptAt() == null
            || t.nextAttemptAt().toEpochMilli() <= Workflow.currentTimeMillis())) {
      // A lost capacity race is neutral (T2): no streak, no backoff, just try again soon.
      long base = settings().capacityRetryMillis();
      awaitWake(Math.round(base * (0.8 + 0.4 * random.nextDouble())));
    }
  }

  /**
   * Waits for the planning call; a replan request, or a wake whose reloaded record shows the target
   * moved on, cancels it instead.
   */
  private void awaitPlanningUnlessSuperseded(
      Promise<PlanningAttempt> attempt, CancellationScope scope) {
    // Whether a failure of this call was recorded, so that it may be waiting for its retry.
    boolean failedBefore = false;
    while (!attempt.isCompleted()) {
      Workflow.await(() -> attempt.isCompleted() || woken || replanRequested);
      if (attempt.isCompleted()) {
        return;
      }
      if (replanRequested) {
        scope.cancel("replan requested");
        return;
      }
      woken = false;
      TargetSnapshot t = db.load(ref);
      remember(t);
      failedBefore |=
          t.found()
              && t.state() == TargetState.PENDING_BACKFILL
              && t.consecutiveFailures() > 0
              && t.nextAttemptAt() != null;
      if (movedOn(t, failedBefore)) {
        scope.cancel("the target's record changed");
        return;
      }
    }
  }

  /**
   * Whether a record read while planning shows that the planning call is no longer wanted, so a
   * retry waiting out the backoff would come late: the target was deleted, or — after a failure of
   * this call was recorded — it is pending with nothing to back off from (the API replanned it,
   * T7). Before any failure such a record is just the call's first attempt not yet holding
   * capacity, which must go on. (Only the call itself moves a target to needs_resync, and it ends
   * with that.)
   */
  private static boolean movedOn(TargetSnapshot t, boolean failedBefore) {
    return !t.found()
        || (failedBefore
            && t.state() == TargetState.PENDING_BACKFILL
            && t.consecutiveFailures() == 0
            && t.nextAttemptAt() == null);
  }

  /**
   * The planning activity's options: retried without limit, from the configured backoff base
   * doubling to its cap (a failed attempt names its own jittered delay, which Temporal uses
   * instead); heartbeating, so an attempt whose worker died is retried within the heartbeat
   * timeout.
   */
  private ActivityOptions planningOptions() {
    return ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofMinutes(5))
        .setHeartbeatTimeout(Duration.ofMillis(settings().effectivePlanHeartbeatMillis()))
        .setSummary("take capacity and plan the target's backfill run")
        .setRetryOptions(planningRetryOptions(settings()))
        .build();
  }

  /** Initial interval the backoff base, coefficient 2, capped, unlimited attempts (T3). */
  static RetryOptions planningRetryOptions(TargetSettings settings) {
    long base = Math.max(1, settings.backoffBaseMillis());
    return RetryOptions.newBuilder()
        .setInitialInterval(Duration.ofMillis(base))
        .setBackoffCoefficient(2)
        .setMaximumInterval(Duration.ofMillis(Math.max(base, settings.backoffCapMillis())))
        .setMaximumAttempts(0)
        .setDoNotRetry(
            TargetFailure.TARGET_PLANNING_PERMANENT.name(),
            TargetFailure.TARGET_SUPERSEDED.name(),
            TargetFailure.PREVIOUS_RUN_ACTIVE.name())
        .build();
  }

  private void startRun(PlannedRun planned) {
    String runWorkflowId = RunWorkflowIds.forRun(planned.runId());
    BackfillRunWorkflow child =
        Workflow.newChildWorkflowStub(
            BackfillRunWorkflow.class,
            ChildWorkflowOptions.newBuilder()
                .setWorkflowId(runWorkflowId)
                // The run outlives this execution: the target continues as new and polls it.
                .setParentClosePolicy(ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON)
                .setTypedSearchAttributes(
                    RunWorkflowStart.attributes(planned.backfill(), RunStatus.PENDING, name))
                .setStaticSummary(planned.summary())
                .build());
    Promise<RunOutcome> outcome =
        Async.function(child::run, RunWorkflowInput.fresh(planned.runId()));
    // The outcome is read from the run's record by observeRun; this only marks the promise handled.
    outcome.handle((value, failure) -> null);
    try {
      Workflow.getWorkflowExecution(child).get();
      log.info("target {}: started run {} as {}", name, planned.runId(), runWorkflowId);
    } catch (TemporalFailure failure) {
      // Typically: a workflow with this id is already running (a repeated start). The run's
      // record decides what happens next, so there is nothing to undo here.
      log.warn(
          "target {}: run workflow {} not started: {}", name, runWorkflowId, describe(failure));
    }
  }

  private void applyReplan() {
    ReplanResult result = db.replan(ref);
    if (!result.found()) {
      log.info("target {}: replan ignored, the target no longer exists", name);
      return;
    }
    log.info(
        "target {}: replanned from {} with streak {}{}",
        name,
        result.previousState() == null ? "?" : result.previousState().wire(),
        result.previousFailures(),
        result.cancelledRunId() == null ? "" : ", cancelled run " + result.cancelledRunId());
  }

  private void continueAsNew(TargetRef target, int iterations) {
    Workflow.await(Workflow::isEveryHandlerFinished);
    if (replanRequested) {
      // The next execution carries only the name, so a requested replan is applied first.
      replanRequested = false;
      applyReplan();
    }
    log.info("target {}: continuing as new after {} iterations", name, iterations);
    Workflow.continueAsNew(target);
  }

  /** Waits until woken (by a signal) or until {@code millis} have passed. */
  private void awaitWake(long millis) {
    if (millis <= 0) {
      return;
    }
    Workflow.await(Duration.ofMillis(millis), () -> woken);
  }

  private TargetSettings settings() {
    return last != null && last.settings() != null ? last.settings() : DEFAULT_SETTINGS;
  }

  private void remember(TargetSnapshot snapshot) {
    if (snapshot == null) {
      return;
    }
    last = snapshot;
    Workflow.setCurrentDetails(details(snapshot));
  }

  /** The Web UI's current details: state, streak and next attempt in words. */
  private static String details(TargetSnapshot t) {
    if (!t.found()) {
      return "deleted";
    }
    StringBuilder text = new StringBuilder(t.state() == null ? "unknown" : t.state().wire());
    if (t.consecutiveFailures() > 0) {
      text.append(" · ")
          .append(t.consecutiveFailures())
          .append(t.consecutiveFailures() == 1 ? " failure" : " consecutive failures");
      if (t.firstFailedAt() != null) {
        text.append(" since ").append(t.firstFailedAt());
      }
    }
    if (t.failing()) {
      text.append(" · failing");
    }
    if (t.state() == TargetState.PENDING_BACKFILL) {
      if (t.nextAttemptAt() == null) {
        text.append(" · next attempt as soon as capacity allows");
      } else {
        long in = t.nextAttemptAt().toEpochMilli() - Workflow.currentTimeMillis();
        text.append(" · next attempt at ").append(t.nextAttemptAt());
        text.append(in > 0 ? " (in " + words(Duration.ofMillis(in)) + ")" : " (due)");
      }
    }
    if (t.currentRunId() != null) {
      text.append(" · run ").append(t.currentRunId());
    }
    if (t.queuedLiveBatches() > 0) {
      text.append(" · ").append(t.queuedLiveBatches()).append(" live batches queued");
    }
    if (t.lastError() != null) {
      text.append(" · last error: ").append(t.lastError());
    }
    return text.toString();
  }

  private static String words(Duration d) {
    long seconds = Math.max(1, (d.toMillis() + 999) / 1000);
    if (seconds < 120) {
      return seconds + " s";
    }
    if (seconds < 7200) {
      return (seconds + 59) / 60 + " min";
    }
    return (seconds + 3599) / 3600 + " h";
  }

  private static boolean isType(TemporalFailure failure, TargetFailure type) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof ApplicationFailure application) {
        return type.name().equals(application.getType());
      }
    }
    return false;
  }

  private static String describe(TemporalFailure failure) {
    Throwable cause = failure;
    while ((cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof TemporalFailure temporal) {
      return temporal.getOriginalMessage();
    }
    return String.valueOf(cause.getMessage());
  }

  @Override
  public void wake() {
    woken = true;
  }

  @Override
  public void replan() {
    if (replanRequested) {
      log.info("target {}: replan already requested; ignored", name);
      return;
    }
    replanRequested = true;
    woken = true;
  }

  @Override
  public TargetView status() {
    if (last == null) {
      return new TargetView(name, null, 0, false, null, null, null, null, 0, null);
    }
    return TargetView.of(last);
  }
}
