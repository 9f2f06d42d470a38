package dev.dripline.activities.targets;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.targets.TargetRecordActivitiesImpl.Recorded;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.targets.TargetRunStops;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.run.RunSummary;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.store.targets.TargetWithQueue;
import dev.dripline.workflows.run.CapPolicy;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.CapacityResult;
import dev.dripline.workflows.targets.PlannedRun;
import dev.dripline.workflows.targets.PlanningAttempt;
import dev.dripline.workflows.targets.PlanningFailure;
import dev.dripline.workflows.targets.TargetFailure;
import dev.dripline.workflows.targets.TargetPlanningActivities;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import dev.dripline.workflows.targets.TargetTransitions;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.client.WorkflowClient;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TargetPlanningActivities} on PostgreSQL: planning a target's backfill run. Capacity and
 * the record of a planning failure are {@link TargetRecordActivitiesImpl}'s.
 *
 * <p><b>One run per planning attempt</b>: taking a slot starts a planning attempt ({@code
 * targets.attempt_id}, from a sequence), and the run a planning call saves carries it ({@code
 * runs.target_attempt}). A call repeated because its answer was lost finds that run, whatever
 * became of it, instead of saving a second one; any other active run of the target (left by an
 * earlier attempt or by a deleted target of the same name) is stopped, never adopted.
 *
 * <p><b>A failed run is retried, not replaced</b> (T5): the next attempt after a run failure asks
 * that run's workflow to re-queue its failed batches (R8, the {@code retryRun} Update, as the API's
 * retry does) and makes it current again, without resetting the streak; only a batch of the retried
 * run completing does (T4).
 */
@Singleton
public class TargetPlanningActivitiesImpl implements TargetPlanningActivities {
  /** How early a planning retry may come (clock skew) and still wait for its due time. */
  static final Duration CLOCK_SKEW_TOLERANCE = Duration.ofSeconds(5);

  /** Failure type raised by {@link #plan} for a target that an operator moved on meanwhile. */
  public static final String TARGET_SUPERSEDED = TargetFailure.TARGET_SUPERSEDED.name();

  private static final Logger LOG = LoggerFactory.getLogger(TargetPlanningActivitiesImpl.class);

  private final TargetRepository records;
  private final RunRepository runs;
  private final DataTransactions transactions;
  private final BackfillRegistry registry;
  private final TargetOptions targetOptions;
  private final EngineConfig engine;
  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final TargetRecordActivitiesImpl targetRecords;
  private final TargetWakeups wakeups;
  private final Database database;

  /** Heartbeats of planning calls. */
  private final HeartbeatTicker ticker;

  public TargetPlanningActivitiesImpl(
      TargetRepository records,
      RunRepository runs,
      DataTransactions transactions,
      BackfillRegistry registry,
      TargetOptions targetOptions,
      EngineConfig engine,
      WorkflowClient client,
      TemporalConfig temporal,
      TargetRecordActivitiesImpl targetRecords,
      TargetWakeups wakeups,
      HeartbeatTicker ticker,
      Database database) {
    this.records = records;
    this.runs = runs;
    this.transactions = transactions;
    this.registry = registry;
    this.targetOptions = targetOptions;
    this.engine = engine;
    this.client = client;
    this.temporal = temporal;
    this.targetRecords = targetRecords;
    this.wakeups = wakeups;
    this.ticker = ticker;
    this.database = database;
  }

  // ---------------------------------------------------------------------------------------------
  // Planning (T3, T4, T5)

  /**
   * A planning call's decision, made in a transaction and acted on after it committed.
   *
   * @param run the run planned, retried or adopted; {@code null} if none (see the callers)
   * @param stopping other runs of the target whose recorded stop is to be delivered
   * @param stillActive a run of the target that is still stopping, which a new run must wait for
   */
  private record Decision(
      PlannedRun run, List<RunToStop> stopping, Long stillActive, boolean retry) {
    static Decision of(PlannedRun run) {
      return new Decision(run, List.of(), null, false);
    }

    static Decision stopFirst(List<RunToStop> others) {
      return new Decision(null, others, others.get(0).runId(), false);
    }

    /** {@code run} ended failed or stopped: its workflow is to retry it. */
    static Decision toRetry(PlannedRun run) {
      return new Decision(run, List.of(), null, true);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The capacity decision is {@link TargetRecordActivitiesImpl#acquireCapacity}'s and the
   * planning {@link #plan}'s; a failure is recorded only while the target still holds the slot this
   * attempt took (same {@code attempt_id}), so an attempt an operator superseded — even one whose
   * target took a new slot since — never counts. Heartbeats throughout.
   */
  @Override
  public PlanningAttempt attemptPlanning(TargetRef target) {
    String name = target.name();
    ScheduledFuture<?> heartbeat = heartbeatWhileInAnActivity(name);
    try {
      awaitDueWithinSkew(name);
      CapacityResult capacity = targetRecords.acquireCapacity(target);
      if (!capacity.acquired()) {
        return PlanningAttempt.noCapacity(capacity.target());
      }
      Long attempt = records.find(name).map(TargetWithQueue::attemptId).orElse(null);
      PlannedRun run;
      try {
        run = planAttempt(name);
      } catch (ApplicationFailure failure) {
        throw recordedFailure(name, attempt, failure);
      }
      return new PlanningAttempt(run, targetRecords.load(target));
    } finally {
      if (heartbeat != null) {
        heartbeat.cancel(false);
      }
    }
  }

  /**
   * A retry that Temporal starts a little before the recorded {@code next_attempt_at} (its clock
   * and PostgreSQL's differ) waits out the rest here, so it stays a retry of the same activity
   * instead of answering "not due" and starting over at attempt 1.
   */
  private void awaitDueWithinSkew(String name) {
    TargetWithQueue row = records.find(name).orElse(null);
    if (row == null
        || !TargetState.PENDING_BACKFILL.wire().equals(row.state())
        || row.nextAttemptAt() == null) {
      return;
    }
    // Rounded up: capacity is refused until the recorded instant itself (T3).
    long early =
        (Duration.between(row.dbNow(), row.nextAttemptAt()).toNanos() + 999_999) / 1_000_000;
    if (early > 0 && early <= CLOCK_SKEW_TOLERANCE.toMillis()) {
      try {
        Thread.sleep(early);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * What a planning attempt raises for a failure of {@link #planAttempt}: a declared planning
   * failure is recorded (T3) and raised again, a transient one with the recorded backoff as the
   * next-retry delay; one the attempt may no longer record is raised as {@code TARGET_SUPERSEDED}.
   * Other failures are raised as they are.
   */
  private ApplicationFailure recordedFailure(
      String name, Long attempt, ApplicationFailure failure) {
    boolean permanent = TargetFailure.TARGET_PLANNING_PERMANENT.name().equals(failure.getType());
    if (!permanent && !TargetFailure.TARGET_PLANNING_FAILED.name().equals(failure.getType())) {
      return failure;
    }
    String error = failure.getOriginalMessage();
    Recorded recorded =
        targetRecords.recordFailure(
            new PlanningFailure(name, error, permanent, ThreadLocalRandom.current().nextDouble()),
            attempt);
    if (recorded == null) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          "planning of target " + name + " failed after an operator moved it on: " + error,
          TargetFailure.TARGET_SUPERSEDED.name(),
          failure);
    }
    TargetSnapshot after = recorded.after();
    LOG.warn(
        "Target {}: planning failed{} (failure {}): {}",
        name,
        permanent ? " permanently" : "",
        after.consecutiveFailures(),
        error);
    if (permanent) {
      return failure;
    }
    // The workflow waits for this call's retries: a wake makes it reload the record, so its status
    // query and current details show the streak and the next attempt.
    wakeups.wake(name);
    Duration delay = Duration.between(recorded.now(), after.nextAttemptAt());
    return ApplicationFailure.newFailureWithCauseAndDelay(
        error
            + " (failure "
            + after.consecutiveFailures()
            + " since "
            + after.firstFailedAt()
            + "; next attempt at "
            + after.nextAttemptAt()
            + ")",
        TargetFailure.TARGET_PLANNING_FAILED.name(),
        failure,
        delay);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Idempotent by target and planning attempt: a repeated call (the engine retries one whose
   * answer was lost) returns the run this attempt saved, whatever its status, or the target's
   * current run while it is active. After a run failure it retries that run (T5). Otherwise the
   * definition is probed with {@code keysAfter(context, null, 1)} outside any transaction (user
   * code never runs while a target row is locked); its context has run id 0, as no run exists yet.
   * Run by Temporal, the call heartbeats from a background ticker, so a call whose worker died is
   * retried within the heartbeat timeout.
   */
  @Override
  public PlannedRun plan(TargetRef target) {
    ScheduledFuture<?> heartbeat = heartbeatWhileInAnActivity(target.name());
    try {
      return planAttempt(target.name());
    } finally {
      if (heartbeat != null) {
        heartbeat.cancel(false);
      }
    }
  }

  private PlannedRun planAttempt(String name) {
    TargetWithQueue row = records.find(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot snapshot = row.snapshot(targetRecords.settings());
    PlannedRun existing = transactions.inTransaction(c -> adoptAttemptRun(name));
    if (existing != null) {
      return existing;
    }
    requireBackfilling(snapshot);
    if (snapshot.retryRunId() != null) {
      PlannedRun retried = retryFailedRun(name);
      if (retried != null) {
        return retried;
      }
      // The failed run can no longer be retried (deleted, or nothing in it to do again): a new
      // run, which does not reset the streak (TargetTransitions.planned).
    }
    KeyedBackfill keyed = keyed(snapshot.backfill(), name);
    BackfillDefinition definition = keyed.definition();
    ValidatedOptions options = targetOptions.effectiveOptions(definition, name, row.options());
    BackfillContext context =
        new BackfillContext(
            0,
            definition.name(),
            new BackfillOptions(options.asMap()),
            null,
            database.dataSource());
    try {
      keyed.checkPlannable(context);
    } catch (PermanentBackfillException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause(
          "backfill " + definition.name() + " can never plan target " + name + ": " + message(e),
          TargetFailure.TARGET_PLANNING_PERMANENT.name(),
          e);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw ApplicationFailure.newFailureWithCause(
          "planning target " + name + " failed: " + message(e),
          TargetFailure.TARGET_PLANNING_FAILED.name(),
          e);
    }
    return act(name, transactions.inTransaction(connection -> saveRun(name, definition, options)));
  }

  /**
   * Sends the stops a decision found to the runs' workflows; a run of the target still active
   * defers planning (streak-neutral, T8).
   */
  private PlannedRun act(String name, Decision decision) {
    for (RunToStop run : decision.stopping()) {
      try {
        TargetRunStops.deliver(client, temporal.taskQueue(), name, run);
      } catch (RuntimeException e) {
        // The run is still the target's: the next planning call sends it again.
        LOG.warn("Target {}: stop of run {} not delivered: {}", name, run.runId(), e.toString());
      }
    }
    if (decision.stillActive() != null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "run " + decision.stillActive() + " of target " + name + " is still stopping",
          TargetFailure.PREVIOUS_RUN_ACTIVE.name());
    }
    return decision.run();
  }

  /**
   * The run of this planning attempt if an earlier call of it saved one (its answer was lost) —
   * whatever became of the run since — else the target's current run while it is active.
   */
  private PlannedRun attemptRun(TargetWithQueue row) {
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    if (t.state() != TargetState.BACKFILLING) {
      return null;
    }
    if (row.attemptId() != null) {
      Optional<RunSummary> saved = runs.findByTargetAttempt(row.attemptId(), t.name());
      if (saved.isPresent()) {
        return plannedRun(saved.get(), t.name());
      }
    }
    return currentActiveRun(t);
  }

  /**
   * {@link #attemptRun}, made the target's current run again if the target lost track of it (only a
   * target backfilling since before planning calls were retried can have).
   */
  private PlannedRun adoptAttemptRun(String name) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      return null;
    }
    PlannedRun run = attemptRun(row);
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    if (run != null && !Long.valueOf(run.runId()).equals(t.currentRunId())) {
      records.write(
          TargetState.BACKFILLING, TargetTransitions.planned(t, run.runId(), row.dbNow()));
    }
    return run;
  }

  private static PlannedRun plannedRun(RunSummary run, String target) {
    return new PlannedRun(
        run.id(), run.backfill(), summary(run.backfill(), target, run.batchSize()));
  }

  /**
   * After a run failure (T5): retries that run — its failed batches, and a stopped run's stopped
   * ones, go back to pending (R8) — and makes it current again, the streak untouched. The retry is
   * the run's workflow's to make (the {@code retryRun} Update, as the API's): the target decides in
   * one transaction, asks the workflow, and records the retry in a second transaction once the
   * workflow has re-queued. An attempt that died in between finds the run active at its next call
   * and adopts it.
   *
   * @return the run retried or adopted, or {@code null}: nothing left to retry, plan a new run
   */
  private PlannedRun retryFailedRun(String name) {
    Decision decision = transactions.inTransaction(c -> decideRetry(name));
    PlannedRun run = act(name, decision);
    if (run == null || !decision.retry()) {
      return run;
    }
    RetryAnswer answer = retryRun(name, new RunToStop(run.runId(), run.backfill()));
    if (answer.runGone() || answer.refusal() != null) {
      LOG.info(
          "Target {}: run {} is not retried ({}); a new run is planned",
          name,
          run.runId(),
          answer.runGone() ? "it no longer exists" : answer.refusal());
      return null;
    }
    return transactions.inTransaction(c -> recordRetried(name, run));
  }

  /**
   * Asks the workflow of run {@code run} to retry it, as the API's retry does, and returns its
   * answer (a seam for tests without a run worker).
   */
  RetryAnswer retryRun(String target, RunToStop run) {
    return TargetRunStops.retry(client, temporal.taskQueue(), target, run);
  }

  /** Records that the target's run is current again after its workflow re-queued it. */
  private PlannedRun recordRetried(String name, PlannedRun run) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    requireBackfilling(t);
    if (!Long.valueOf(run.runId()).equals(t.retryRunId())) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " changed while its run " + run.runId() + " was retried",
          TargetFailure.TARGET_SUPERSEDED.name());
    }
    // Not measured again here: batches of the retry may have completed already, and they are
    // forward progress (T4). decideRetry measured from before the retry.
    records.write(TargetState.BACKFILLING, TargetTransitions.retried(t, run.runId(), row.dbNow()));
    return run;
  }

  /**
   * The first transaction of {@link #retryFailedRun}: the run to retry ({@link Decision#toRetry}),
   * or one of the target that is active again already (an operator retried it) or has completed
   * meanwhile, adopted as it is and recorded current here.
   */
  private Decision decideRetry(String name) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    requireBackfilling(t);
    Long retry = t.retryRunId();
    if (retry == null) {
      return Decision.of(null);
    }
    // One active run per target: any other active run is not this target's to keep.
    List<RunToStop> others = runs.findActiveOfTarget(name, t.currentRunId(), retry);
    if (!others.isEmpty()) {
      return Decision.stopFirst(others);
    }
    RunSummary stored = runs.findSummary(retry).orElse(null);
    if (stored == null) {
      return Decision.of(null);
    }
    String status = stored.status();
    PlannedRun run = plannedRun(stored, name);
    if ("failed".equals(status) || "stopped".equals(status)) {
      // Forward progress is measured from here, while the run has no batch to complete: every
      // batch the retry completes counts (T4), those that complete before it is recorded too.
      records.observeFrom(name, retry);
      return Decision.toRetry(run);
    }
    // Active again (retried by an earlier attempt that died, or by an operator) or completed: the
    // keys observed when the run ended are where its progress is measured from, so the batches
    // completed since the retry count (T4).
    records.write(TargetState.BACKFILLING, TargetTransitions.retried(t, retry, row.dbNow()));
    return Decision.of(run);
  }

  private Decision saveRun(String name, BackfillDefinition definition, ValidatedOptions options) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    requireBackfilling(t);
    PlannedRun existing = attemptRun(row);
    if (existing != null) {
      return Decision.of(existing);
    }
    // Any other active run of the target belongs to no attempt of this one: a run an operator
    // cancelled (replan) still finishing its in-flight batches, or one left by an earlier attempt
    // or by a deleted target of the same name. None is adopted: a pending one is stopped here, a
    // running one must finish stopping before a new run may exist (one active run per target).
    List<RunToStop> others = runs.findActiveOfTarget(name, t.currentRunId(), null);
    if (!others.isEmpty()) {
      return Decision.stopFirst(others);
    }
    long attempt;
    if (row.attemptId() != null) {
      attempt = row.attemptId();
    } else {
      // Backfilling since before attempts were recorded (the row stays locked).
      records.startAttempt(name);
      attempt = records.lock(name).orElseThrow().attemptId();
    }
    long runId = runs.nextId();
    int batchSize = definition.defaultBatchSize();
    int cap = CapPolicy.effective(definition.maxParallelBatches(), null, engine.safetyCap());
    // A target's run is tuned as its definition says (P4).
    BatchTuning tuning =
        BatchTuning.resolve(
            definition.targetBatchDuration() == null
                ? null
                : BatchTuning.targetMillis(definition.targetBatchDuration()),
            definition.minBatchSize(),
            definition.maxBatchSize(),
            batchSize);
    // The API's insert, with the target and its planning attempt: a target's run takes its
    // definition's failure budget, pool and pace as published, as an API run that names none does.
    runs.insert(
        runId,
        definition.name(),
        options.canonicalJson(),
        batchSize,
        null,
        null,
        cap,
        null,
        "target:" + name,
        null,
        RunWorkflowIds.forRun(runId),
        tuning == null ? null : tuning.targetMillis(),
        tuning == null ? null : tuning.minBatchSize(),
        tuning == null ? null : tuning.maxBatchSize(),
        tuning == null ? null : tuning.startingSize(batchSize),
        null,
        RunRepository.DEFAULT_FAILURE_BUDGET_MIN_BATCHES,
        definition.pool(),
        null,
        name,
        attempt);
    records.write(TargetState.BACKFILLING, TargetTransitions.planned(t, runId, row.dbNow()));
    // A new run: forward progress counts from its first batch.
    records.observe(name, 0L, false);
    return Decision.of(
        new PlannedRun(runId, definition.name(), summary(definition.name(), name, batchSize)));
  }

  /** Heartbeats while this call runs as a Temporal activity; null when called directly (tests). */
  private ScheduledFuture<?> heartbeatWhileInAnActivity(String name) {
    ActivityExecutionContext context;
    try {
      context = Activity.getExecutionContext();
    } catch (IllegalStateException notInAnActivity) {
      return null;
    }
    java.time.Duration timeout = context.getInfo().getHeartbeatTimeout();
    long every =
        timeout == null || timeout.isZero() || timeout.isNegative()
            ? 10_000
            : Math.max(100, Math.min(timeout.toMillis() / 3, 10_000));
    return ticker.every(
        every,
        () -> {
          try {
            context.heartbeat(null);
          } catch (RuntimeException e) {
            LOG.debug("Heartbeat of planning target {} failed: {}", name, e.toString());
          }
        });
  }

  private static String summary(String backfill, String target, int batchSize) {
    return backfill + " · target " + target + " · batch size " + batchSize;
  }

  /** The target's current run as a {@link PlannedRun} if it is still active, else null. */
  private PlannedRun currentActiveRun(TargetSnapshot t) {
    if (t.currentRunId() == null) {
      return null;
    }
    return runs.findActiveSummary(t.currentRunId())
        .map(run -> plannedRun(run, t.name()))
        .orElse(null);
  }

  private static void requireBackfilling(TargetSnapshot t) {
    if (t.state() != TargetState.BACKFILLING) {
      // An operator replanned (or deleted and re-created) the target meanwhile: planning for a
      // target that holds no capacity slot would break T2.
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + t.name() + " is " + t.state().wire() + ", not backfilling",
          TARGET_SUPERSEDED);
    }
  }

  private KeyedBackfill keyed(String backfill, String target) {
    // Another worker may host the definition (a rolling deploy): retryable, unlike for a run.
    return registry
        .find(backfill)
        .orElseThrow(
            () ->
                ApplicationFailure.newFailure(
                    "no backfill definition named "
                        + backfill
                        + " (target "
                        + target
                        + ") is registered in this worker",
                    TargetFailure.TARGET_PLANNING_FAILED.name()));
  }

  private static String message(Throwable e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
