package dev.dripline.activities.targets;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.run.ErrorText;
import dev.dripline.spi.Backfill;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.catalogue.OptionsValidator;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.store.config.EngineConfig;
import dev.dripline.store.config.TargetConfig;
import dev.dripline.store.config.TemporalConfig;
import dev.dripline.store.counters.DriplineCounterStore;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.metrics.SnapshotSeries;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.store.run.RunOutcome;
import dev.dripline.store.run.RunStore;
import dev.dripline.store.run.RunSummary;
import dev.dripline.store.targets.LiveBatchStore;
import dev.dripline.store.targets.TargetLine;
import dev.dripline.store.targets.TargetReplan;
import dev.dripline.store.targets.TargetRunStops;
import dev.dripline.store.targets.TargetStore;
import dev.dripline.store.targets.TargetWithQueue;
import dev.dripline.workflows.run.CapPolicy;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.CapacityResult;
import dev.dripline.workflows.targets.LiveDrain;
import dev.dripline.workflows.targets.LiveDrainRequest;
import dev.dripline.workflows.targets.PlannedRun;
import dev.dripline.workflows.targets.PlanningAttempt;
import dev.dripline.workflows.targets.PlanningFailure;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.RunObservation;
import dev.dripline.workflows.targets.TargetActivities;
import dev.dripline.workflows.targets.TargetFailure;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetSettings;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import dev.dripline.workflows.targets.TargetTransitions;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.client.WorkflowClient;
import io.temporal.failure.ApplicationFailure;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TargetActivities} on PostgreSQL.
 *
 * <p>Every change to a target is made in one explicit transaction that locks the target's row
 * ({@code for update}), checks the state the caller expects, applies one of the pure {@link
 * TargetTransitions} and writes the result with a compare-and-set on that state. The streak and
 * backoff arithmetic therefore lives in one place, shared with the workflow tests. The statements
 * are the repositories' of their tables — {@link TargetStore}, {@link LiveBatchStore}, {@link
 * RunStore}, {@link DriplineCounterStore} — and a transaction's calls join it ({@link
 * DataTransactions}, programmatic: no AOP on an activity implementation).
 *
 * <p><b>Capacity goes to the target that has waited longest</b> ({@link TargetLine}): a target is
 * granted a slot only if free capacity serves it after every eligible target ahead of it in line.
 * That is read without any lock first — most calls are "not yet" and, as a lost race writes
 * nothing, need none — and decided again under the capacity lock only by a target that may win.
 * When a target releases its slot, the targets next in line are woken (a signal, best effort: they
 * also poll).
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
 *
 * <p><b>A target's name is its fault tag</b> (spec §7): when the target's definition declares a
 * {@value #FAULT_TAG_OPTION} option and the target's options do not set it, the target's name is
 * used, both when probing the definition during planning and in the options of the run it starts.
 * So an {@code example_faults} row tagged with the target's name makes its planning, its run's
 * batches, or its live batches fail.
 *
 * <p><b>Live batches are applied at least once</b>: a live batch is applied by the definition in
 * the definition's own transaction and marked applied in a second one, so a crash between the two
 * applies it again. Definitions must make {@link Backfill#applyLive} idempotent, as the SPI
 * requires.
 */
@Singleton
public class TargetActivitiesImpl implements TargetActivities {
  /** Key of the transaction-scoped advisory lock that serialises capacity decisions (T2). */
  static final long CAPACITY_LOCK = TargetStore.CAPACITY_LOCK;

  /** The option the examples (and any definition) read their fault tag from. */
  public static final String FAULT_TAG_OPTION = "faultTag";

  /** How early a planning retry may come (clock skew) and still wait for its due time. */
  static final Duration CLOCK_SKEW_TOLERANCE = Duration.ofSeconds(5);

  /** Failure type raised by {@link #plan} for a target that an operator moved on meanwhile. */
  public static final String TARGET_SUPERSEDED = TargetFailure.TARGET_SUPERSEDED.name();

  private static final Logger LOG = LoggerFactory.getLogger(TargetActivitiesImpl.class);
  private static final Argument<Map<String, Object>> OPTIONS =
      Argument.mapOf(String.class, Object.class);

  private final TargetStore records;
  private final LiveBatchStore liveBatches;
  private final RunStore runs;
  private final DriplineCounterStore counters;
  private final TargetLine line;
  private final TargetReplan replans;
  private final DataTransactions transactions;
  private final BackfillRegistry registry;
  private final ObjectMapper objectMapper;
  private final EngineConfig engine;
  private final TargetConfig targets;
  private final WorkflowClient client;
  private final TemporalConfig temporal;

  /** Heartbeats of planning calls. */
  private final ScheduledExecutorService ticker =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "dripline-target-plan-heartbeat");
            thread.setDaemon(true);
            return thread;
          });

  /** Wake-ups of targets next in line, sent off the activity's thread (best effort). */
  private final ExecutorService wakeups =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "dripline-target-wakeups");
            thread.setDaemon(true);
            return thread;
          });

  public TargetActivitiesImpl(
      TargetStore records,
      LiveBatchStore liveBatches,
      RunStore runs,
      DriplineCounterStore counters,
      TargetLine line,
      TargetReplan replans,
      DataTransactions transactions,
      BackfillRegistry registry,
      ObjectMapper objectMapper,
      EngineConfig engine,
      TargetConfig targets,
      WorkflowClient client,
      TemporalConfig temporal) {
    this.records = records;
    this.liveBatches = liveBatches;
    this.runs = runs;
    this.counters = counters;
    this.line = line;
    this.replans = replans;
    this.transactions = transactions;
    this.registry = registry;
    this.objectMapper = objectMapper;
    this.engine = engine;
    this.targets = targets;
    this.client = client;
    this.temporal = temporal;
  }

  @PreDestroy
  void close() {
    ticker.shutdownNow();
    wakeups.shutdownNow();
  }

  /** The target settings, with planning calls heartbeating like runs' planning and batches. */
  private TargetSettings settings() {
    return targets.settings().withPlanHeartbeatMillis(engine.batchHeartbeatTimeout().toMillis());
  }

  @Override
  public TargetSnapshot load(TargetRef target) {
    return records
        .find(target.name())
        .map(row -> row.snapshot(settings()))
        .orElseGet(() -> TargetSnapshot.notFound(target.name()));
  }

  // ---------------------------------------------------------------------------------------------
  // Capacity (T1, T2)

  /**
   * {@inheritDoc}
   *
   * <p>Capacity goes to the eligible target that has waited longest ({@link TargetLine}). A target
   * that free capacity would not serve now is answered from a plain read, without the capacity
   * lock; only one that may win decides again under it. Winning starts a planning attempt (a new
   * {@code attempt_id}). A repeated call for a target this call already moved answers {@code
   * acquired=true} again: only the target's own workflow moves it to backfilling.
   */
  @Override
  public CapacityResult acquireCapacity(TargetRef target) {
    CapacityResult look = transactions.inTransaction(c -> decideCapacity(target.name(), false));
    if (look != null) {
      return look;
    }
    return transactions.inTransaction(
        connection -> {
          // Counting and moving must be one decision: without the lock two targets could both see
          // one free slot and both take it.
          records.lockCapacity();
          return decideCapacity(target.name(), true);
        });
  }

  /**
   * The capacity decision for one target; without the lock ({@code locked} false) {@code null}
   * where only a decision under the lock may grant the slot.
   */
  private CapacityResult decideCapacity(String name, boolean locked) {
    Optional<TargetWithQueue> row = locked ? records.lock(name) : records.find(name);
    if (row.isEmpty()) {
      return new CapacityResult(false, TargetSnapshot.notFound(name));
    }
    TargetSnapshot t = row.get().snapshot(settings());
    if (t.state() == TargetState.BACKFILLING) {
      return new CapacityResult(true, t);
    }
    if (t.state() != TargetState.PENDING_BACKFILL) {
      return new CapacityResult(false, t);
    }
    if (!line.serves(t, targets.globalMaxBackfills(), targets.groupMaxBackfills())) {
      // Lost the race: nothing is written, so the streak, its anchors and the target's place in
      // line stay byte-identical.
      return new CapacityResult(false, t);
    }
    if (!locked) {
      return null;
    }
    TargetSnapshot after = TargetTransitions.backfilling(t);
    records.write(TargetState.PENDING_BACKFILL, after);
    records.startAttempt(name);
    return new CapacityResult(true, after);
  }

  /** Wakes one target's workflow: best effort, off the caller's thread. */
  private void wake(String name) {
    try {
      wakeups.execute(
          () -> {
            try {
              signalWake(name);
            } catch (RuntimeException e) {
              LOG.debug("Waking target {} failed: {}", name, e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.debug("Not waking target {}: shutting down", name);
    }
  }

  /** Sends {@code wake} to one target's workflow, on the caller's thread. */
  private void signalWake(String name) {
    client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).signal("wake");
  }

  /**
   * Wakes the targets that free capacity serves now, after this target released its slot: they need
   * not wait for their next poll. Best effort, off the caller's thread.
   */
  private void wakeNextInLine() {
    try {
      wakeups.execute(
          () -> {
            try {
              List<String> next =
                  transactions.inTransaction(
                      connection ->
                          line.served(targets.globalMaxBackfills(), targets.groupMaxBackfills()));
              for (String name : next) {
                signalWake(name);
              }
            } catch (RuntimeException e) {
              // Each of them polls anyway.
              LOG.debug("Waking the targets next in line failed: {}", e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.debug("Not waking the targets next in line: shutting down");
    }
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
      PlannedRun run, List<TargetRunStops.RunToStop> stopping, Long stillActive, boolean retry) {
    static Decision of(PlannedRun run) {
      return new Decision(run, List.of(), null, false);
    }

    static Decision stopFirst(List<TargetRunStops.RunToStop> others) {
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
   * <p>The capacity decision is {@link #acquireCapacity}'s and the planning {@link #plan}'s; a
   * failure is recorded only while the target still holds the slot this attempt took (same {@code
   * attempt_id}), so an attempt an operator superseded — even one whose target took a new slot
   * since — never counts. Heartbeats throughout.
   */
  @Override
  public PlanningAttempt attemptPlanning(TargetRef target) {
    String name = target.name();
    ScheduledFuture<?> heartbeat = heartbeatWhileInAnActivity(name);
    try {
      awaitDueWithinSkew(name);
      CapacityResult capacity = acquireCapacity(target);
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
      return new PlanningAttempt(run, load(target));
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
    long early = Duration.between(row.dbNow(), row.nextAttemptAt()).toMillis();
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
        record(
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
    wake(name);
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
    TargetSnapshot snapshot = row.snapshot(settings());
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
    Backfill definition = keyed.definition();
    ValidatedOptions options = effectiveOptions(definition, name, row.options());
    BackfillContext context =
        new BackfillContext(0, definition.name(), new BackfillOptions(options.asMap()));
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
    for (TargetRunStops.RunToStop run : decision.stopping()) {
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
    TargetSnapshot t = row.snapshot(settings());
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
    TargetSnapshot t = row.snapshot(settings());
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
    RetryAnswer answer = retryRun(name, new TargetRunStops.RunToStop(run.runId(), run.backfill()));
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
  RetryAnswer retryRun(String target, TargetRunStops.RunToStop run) {
    return TargetRunStops.retry(client, temporal.taskQueue(), target, run);
  }

  /** Records that the target's run is current again after its workflow re-queued it. */
  private PlannedRun recordRetried(String name, PlannedRun run) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot t = row.snapshot(settings());
    requireBackfilling(t);
    if (!Long.valueOf(run.runId()).equals(t.retryRunId())) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " changed while its run " + run.runId() + " was retried",
          TargetFailure.TARGET_SUPERSEDED.name());
    }
    records.write(TargetState.BACKFILLING, TargetTransitions.retried(t, run.runId(), row.dbNow()));
    // Forward progress is measured from here: only a batch this retry completes counts (T4).
    records.observeFrom(name, run.runId());
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
    TargetSnapshot t = row.snapshot(settings());
    requireBackfilling(t);
    Long retry = t.retryRunId();
    if (retry == null) {
      return Decision.of(null);
    }
    // One active run per target: any other active run is not this target's to keep.
    List<TargetRunStops.RunToStop> others =
        TargetRunStops.activeRuns(runs, name, t.currentRunId(), retry);
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
      return Decision.toRetry(run);
    }
    records.write(TargetState.BACKFILLING, TargetTransitions.retried(t, retry, row.dbNow()));
    // Forward progress is measured from here: only a batch this retry completes counts (T4).
    records.observeFrom(name, retry);
    return Decision.of(run);
  }

  private Decision saveRun(String name, Backfill definition, ValidatedOptions options) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "target " + name + " no longer exists", TargetFailure.TARGET_PLANNING_FAILED.name());
    }
    TargetSnapshot t = row.snapshot(settings());
    requireBackfilling(t);
    PlannedRun existing = attemptRun(row);
    if (existing != null) {
      return Decision.of(existing);
    }
    // Any other active run of the target belongs to no attempt of this one: a run an operator
    // cancelled (replan) still finishing its in-flight batches, or one left by an earlier attempt
    // or by a deleted target of the same name. None is adopted: a pending one is stopped here, a
    // running one must finish stopping before a new run may exist (one active run per target).
    List<TargetRunStops.RunToStop> others =
        TargetRunStops.activeRuns(runs, name, t.currentRunId(), null);
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
    runs.insertForTarget(
        runId,
        definition.name(),
        options.canonicalJson(),
        batchSize,
        cap,
        "target:" + name,
        RunWorkflowIds.forRun(runId),
        name,
        attempt,
        tuning == null ? null : tuning.targetMillis(),
        tuning == null ? null : tuning.minBatchSize(),
        tuning == null ? null : tuning.maxBatchSize(),
        tuning == null ? null : tuning.startingSize(batchSize));
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
    return ticker.scheduleAtFixedRate(
        () -> {
          try {
            context.heartbeat(null);
          } catch (RuntimeException e) {
            LOG.debug("Heartbeat of planning target {} failed: {}", name, e.toString());
          }
        },
        every,
        every,
        TimeUnit.MILLISECONDS);
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

  /**
   * The target's options validated against its definition, defaults applied, and the target's name
   * as fault tag if the definition declares one and the options leave it unset.
   *
   * @throws ApplicationFailure non-retryable, {@code TARGET_PLANNING_PERMANENT}, if they do not fit
   */
  private ValidatedOptions effectiveOptions(
      Backfill definition, String target, String optionsJson) {
    Map<String, Object> raw;
    try {
      raw = optionsJson == null ? Map.of() : objectMapper.readValue(optionsJson, OPTIONS);
    } catch (IOException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause(
          "options of target " + target + " are not valid JSON",
          TargetFailure.TARGET_PLANNING_PERMANENT.name(),
          e);
    }
    ValidatedOptions validated = OptionsValidator.validate(definition.options(), raw, "options.");
    if (!validated.isValid()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "options of target "
              + target
              + " do not fit backfill "
              + definition.name()
              + ": "
              + validated.errors().stream()
                  .map(e -> e.field() + " " + e.message())
                  .collect(Collectors.joining("; ")),
          TargetFailure.TARGET_PLANNING_PERMANENT.name());
    }
    boolean declaresFaultTag =
        definition.options().stream().map(OptionSpec::name).anyMatch(FAULT_TAG_OPTION::equals);
    if (!declaresFaultTag || validated.values().containsKey(FAULT_TAG_OPTION)) {
      return validated;
    }
    SortedMap<String, Object> values = new TreeMap<>(validated.values());
    values.put(FAULT_TAG_OPTION, target);
    return new ValidatedOptions(values, validated.errors());
  }

  /**
   * {@inheritDoc}
   *
   * <p>Applied only while the target is backfilling (the attempt holds its slot); a target an
   * operator moved elsewhere (or deleted) is returned unchanged. Not deduplicated: the workflow
   * calls it once per failed attempt.
   */
  @Override
  public TargetSnapshot recordPlanningFailure(PlanningFailure failure) {
    Recorded recorded = record(failure, null);
    if (recorded != null) {
      return recorded.after();
    }
    return load(new TargetRef(failure.name()));
  }

  /** A recorded planning failure and the database clock it was recorded at. */
  private record Recorded(TargetSnapshot after, Instant now) {}

  /**
   * Records a planning failure on a backfilling target — only while it holds the slot of planning
   * attempt {@code attempt}, if given — or returns {@code null} and changes nothing.
   */
  private Recorded record(PlanningFailure failure, Long attempt) {
    Recorded recorded =
        transactions.inTransaction(
            connection -> {
              TargetWithQueue row = records.lock(failure.name()).orElse(null);
              if (row == null) {
                return null;
              }
              TargetSnapshot t = row.snapshot(settings());
              if (t.state() != TargetState.BACKFILLING
                  || (attempt != null && !Objects.equals(attempt, row.attemptId()))) {
                return null;
              }
              TargetSnapshot after =
                  TargetTransitions.planningFailed(
                      t,
                      ErrorText.truncate(failure.error()),
                      failure.permanent(),
                      failure.jitterDraw(),
                      row.dbNow());
              records.write(t.state(), after);
              counters.increment(SnapshotSeries.PLANNING_FAILURES_COUNTER);
              return new Recorded(after, row.dbNow());
            });
    if (recorded != null) {
      wakeNextInLine();
    }
    return recorded;
  }

  // ---------------------------------------------------------------------------------------------
  // Watching the run (T4, T5, T8)

  /**
   * {@inheritDoc}
   *
   * <p>Forward progress is a rise of the run's processed keys since the last observation (for a
   * retried run, since the retry): a batch completed. When the same observation finds the run
   * ended, the progress counts first — a failed run whose retry completed a batch starts a new
   * streak at 3; one whose retry completed nothing adds one to the streak.
   */
  @Override
  public TargetSnapshot observeRun(RunObservation observation) {
    TargetSnapshot[] before = new TargetSnapshot[1];
    TargetSnapshot after = transactions.inTransaction(connection -> observe(observation, before));
    if (before[0] != null
        && before[0].state() == TargetState.BACKFILLING
        && after.found()
        && after.state() != TargetState.BACKFILLING) {
      wakeNextInLine();
    }
    return after;
  }

  private TargetSnapshot observe(RunObservation observation, TargetSnapshot[] before) {
    TargetWithQueue row = records.lock(observation.name()).orElse(null);
    if (row == null) {
      return TargetSnapshot.notFound(observation.name());
    }
    TargetSnapshot t = row.snapshot(settings());
    if (t.state() != TargetState.BACKFILLING
        || t.currentRunId() == null
        || t.currentRunId() != observation.runId()) {
      // Superseded (replan, a newer run) or already moved on by an earlier call: the
      // transition below happens once, on backfilling -> elsewhere.
      return t;
    }
    before[0] = t;
    RunOutcome outcome = runs.findOutcome(observation.runId()).orElse(null);
    if (outcome == null) {
      // Deleted by an operator: streak-neutral (T8).
      return save(t, TargetTransitions.neutral(t), null, false);
    }
    String status = outcome.status();
    long processed = outcome.processedKeys();
    String error = outcome.error();
    Long progress = processed > row.observedProcessedKeys() ? processed : null;
    // A batch completed: forward progress (T4), before whatever ending the run had.
    TargetSnapshot base = progress == null ? t : TargetTransitions.progressed(t);
    return switch (status) {
      case "completed" -> save(t, TargetTransitions.primed(base), progress, true);
      case "failed" ->
          save(
              t,
              TargetTransitions.runFailed(
                  base,
                  ErrorText.truncate(
                      "run "
                          + observation.runId()
                          + " failed"
                          + (error == null ? "" : ": " + error)),
                  observation.jitterDraw(),
                  row.dbNow()),
              progress,
              false);
      case "stopped" -> save(t, TargetTransitions.neutral(base), progress, false);
      default -> progress == null ? t : save(t, base, progress, false);
    };
  }

  private TargetSnapshot save(
      TargetSnapshot before, TargetSnapshot after, Long observedProcessedKeys, boolean primed) {
    records.write(before.state(), after);
    if (observedProcessedKeys != null || primed) {
      records.observe(before.name(), observedProcessedKeys, primed);
    }
    return after;
  }

  // ---------------------------------------------------------------------------------------------
  // Live batches (T5)

  /** The next queued live batch of a primed target, read under the target's row lock. */
  private record NextLive(TargetSnapshot target, String optionsJson, Long id, String payload) {}

  /**
   * {@inheritDoc}
   *
   * <p>Stops at the first failure. A {@link PermanentBackfillException} marks the live batch failed
   * and the target needs_resync; any other failure is raised as a retryable {@code
   * LIVE_BATCH_FAILED} (its error is kept on the live batch, which stays queued) — the batches
   * applied before it stay applied, so a retry resumes after them.
   */
  @Override
  public LiveDrain applyLiveBatches(LiveDrainRequest request) {
    String name = request.name();
    int applied = 0;
    Backfill definition = null;
    BackfillOptions options = null;
    while (applied < request.max()) {
      NextLive next = transactions.inTransaction(connection -> nextLive(name));
      if (next.id() == null) {
        break;
      }
      if (definition == null) {
        definition = liveDefinition(next.target());
        try {
          options =
              new BackfillOptions(effectiveOptions(definition, name, next.optionsJson()).asMap());
        } catch (ApplicationFailure e) {
          if (!TargetFailure.TARGET_PLANNING_PERMANENT.name().equals(e.getType())) {
            throw e;
          }
          // The options no longer fit the definition: no live batch can apply until a resync.
          // The batch itself is not at fault, so it stays queued.
          TargetSnapshot after = liveFailed(name, null, e.getOriginalMessage());
          return new LiveDrain(applied, after.queuedLiveBatches(), after);
        }
      }
      try {
        definition.applyLive(
            new LiveContext(name, definition.name(), options, next.id()), next.payload());
      } catch (PermanentBackfillException e) {
        TargetSnapshot after =
            liveFailed(name, next.id(), "live batch " + next.id() + ": " + ErrorText.of(e));
        return new LiveDrain(applied, after.queuedLiveBatches(), after);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        String error = ErrorText.of(e);
        recordLiveError(next.id(), error);
        throw ApplicationFailure.newFailureWithCause(
            "live batch " + next.id() + " of target " + name + " failed: " + error,
            TargetFailure.LIVE_BATCH_FAILED.name(),
            e);
      }
      liveBatches.markApplied(next.id());
      applied++;
    }
    TargetSnapshot after = load(new TargetRef(name));
    return new LiveDrain(applied, after.queuedLiveBatches(), after);
  }

  private NextLive nextLive(String name) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      return new NextLive(TargetSnapshot.notFound(name), null, null, null);
    }
    TargetSnapshot t = row.snapshot(settings());
    if (t.state() != TargetState.PRIMED) {
      return new NextLive(t, row.options(), null, null);
    }
    return liveBatches
        .findFirstQueued(name)
        .map(live -> new NextLive(t, row.options(), live.id(), live.payload()))
        .orElseGet(() -> new NextLive(t, row.options(), null, null));
  }

  private Backfill liveDefinition(TargetSnapshot target) {
    return registry
        .find(target.backfill())
        .map(KeyedBackfill::definition)
        .orElseThrow(
            () ->
                ApplicationFailure.newFailure(
                    "no backfill definition named "
                        + target.backfill()
                        + " (target "
                        + target.name()
                        + ") is registered in this worker",
                    TargetFailure.LIVE_BATCH_FAILED.name()));
  }

  /**
   * Marks the live batch (if any) failed and the primed target needs_resync, in one transaction.
   */
  private TargetSnapshot liveFailed(String name, Long liveBatchId, String error) {
    return transactions.inTransaction(
        connection -> {
          TargetWithQueue row = records.lock(name).orElse(null);
          if (row == null) {
            return TargetSnapshot.notFound(name);
          }
          TargetSnapshot t = row.snapshot(settings());
          if (t.state() != TargetState.PRIMED) {
            return t;
          }
          String text = ErrorText.truncate(error);
          if (liveBatchId != null) {
            liveBatches.markFailed(liveBatchId, text);
          }
          TargetSnapshot after = TargetTransitions.liveFailed(t, text, row.dbNow());
          records.write(TargetState.PRIMED, after);
          // Read again: the failed batch no longer counts as queued.
          return records.find(name).orElseThrow().snapshot(settings());
        });
  }

  private void recordLiveError(long liveBatchId, String error) {
    try {
      liveBatches.recordError(liveBatchId, ErrorText.truncate(error));
    } catch (RuntimeException e) {
      // Only a diagnostic; the retryable failure raised by the caller is what matters.
      LOG.warn("Cannot record the error of live batch {}: {}", liveBatchId, e.getMessage());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Operator replan (T7)

  /**
   * {@inheritDoc}
   *
   * <p>Uses {@link TargetReplan} (the API's implementation), then sends the stop to the target's
   * active runs (signal-with-start: a run whose execution is gone gets a new one that ends it). The
   * targets next in line are woken if the slot was released.
   */
  @Override
  public ReplanResult replan(TargetRef target) {
    TargetReplan.Replanned replanned = replans.replan(target.name());
    for (TargetRunStops.RunToStop run : replanned.stopping()) {
      try {
        TargetRunStops.deliver(client, temporal.taskQueue(), target.name(), run);
      } catch (RuntimeException e) {
        // The run is still the target's: its next planning call sends the stop again.
        LOG.warn(
            "Target {}: stop of run {} not delivered: {}",
            target.name(),
            run.runId(),
            e.toString());
      }
    }
    if (replanned.result().previousState() == TargetState.BACKFILLING) {
      wakeNextInLine();
    }
    return replanned.result();
  }

  private static String message(Throwable e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
