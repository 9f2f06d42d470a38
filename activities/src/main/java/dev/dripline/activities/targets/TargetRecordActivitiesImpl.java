package dev.dripline.activities.targets;

import dev.dripline.activities.run.ErrorText;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.runtime.config.TargetConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.targets.TargetRunStops;
import dev.dripline.store.counters.DriplineCounterRepository;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.metrics.SnapshotSeries;
import dev.dripline.store.run.ObservedRun;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.store.targets.TargetLine;
import dev.dripline.store.targets.TargetReplan;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.store.targets.TargetWithQueue;
import dev.dripline.workflows.targets.CapacityResult;
import dev.dripline.workflows.targets.PlanningFailure;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.RunObservation;
import dev.dripline.workflows.targets.TargetRecordActivities;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetSettings;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import dev.dripline.workflows.targets.TargetTransitions;
import io.temporal.client.WorkflowClient;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TargetRecordActivities} on PostgreSQL: a target's record, its capacity and what its run
 * came to.
 *
 * <p>Every change to a target is made in one explicit transaction that locks the target's row
 * ({@code for update}), checks the state the caller expects, applies one of the pure {@link
 * TargetTransitions} and writes the result with a compare-and-set on that state. The streak and
 * backoff arithmetic therefore lives in one place, shared with the workflow tests. The statements
 * are the repositories' of their tables — {@link TargetRepository}, {@link RunRepository}, {@link
 * DriplineCounterRepository} — and a transaction's calls join it ({@link DataTransactions},
 * programmatic: no AOP on an activity implementation).
 *
 * <p><b>Capacity goes to the target that has waited longest</b> ({@link TargetLine}): a target is
 * granted a slot only if free capacity serves it after every eligible target ahead of it in line.
 * That is read without any lock first — most calls are "not yet" and, as a lost race writes
 * nothing, need none — and decided again under the capacity lock only by a target that may win.
 * When a target releases its slot, the targets next in line are woken (a signal, best effort: they
 * also poll).
 */
@Singleton
public class TargetRecordActivitiesImpl implements TargetRecordActivities {
  /** Key of the transaction-scoped advisory lock that serialises capacity decisions (T2). */
  static final long CAPACITY_LOCK = TargetRepository.CAPACITY_LOCK;

  private static final Logger LOG = LoggerFactory.getLogger(TargetRecordActivitiesImpl.class);

  private final TargetRepository records;
  private final RunRepository runs;
  private final DriplineCounterRepository counters;
  private final TargetLine line;
  private final TargetReplan replans;
  private final DataTransactions transactions;
  private final EngineConfig engine;
  private final TargetConfig targets;
  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final TargetWakeups wakeups;

  public TargetRecordActivitiesImpl(
      TargetRepository records,
      RunRepository runs,
      DriplineCounterRepository counters,
      TargetLine line,
      TargetReplan replans,
      DataTransactions transactions,
      EngineConfig engine,
      TargetConfig targets,
      WorkflowClient client,
      TemporalConfig temporal,
      TargetWakeups wakeups) {
    this.records = records;
    this.runs = runs;
    this.counters = counters;
    this.line = line;
    this.replans = replans;
    this.transactions = transactions;
    this.engine = engine;
    this.targets = targets;
    this.client = client;
    this.temporal = temporal;
    this.wakeups = wakeups;
  }

  /** The target settings, with planning calls heartbeating like runs' planning and batches. */
  TargetSettings settings() {
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
    if (t.state() != TargetState.PENDING_BACKFILL || !t.dueAt(row.get().dbNow())) {
      // Not pending, or its backoff is not over: Temporal's own retry of a planning attempt (after
      // a lost answer or a heartbeat timeout) can come before the recorded next attempt (T3).
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

  /**
   * {@inheritDoc}
   *
   * <p>Applied only while the target is backfilling (the attempt holds its slot); a target an
   * operator moved elsewhere (or deleted) is returned unchanged. Not deduplicated: the workflow
   * calls it once per failed attempt.
   */
  @Override
  public TargetSnapshot recordPlanningFailure(PlanningFailure failure) {
    Recorded recorded = recordFailure(failure, null);
    if (recorded != null) {
      return recorded.after();
    }
    return load(new TargetRef(failure.name()));
  }

  /** A recorded planning failure and the database clock it was recorded at. */
  record Recorded(TargetSnapshot after, Instant now) {}

  /**
   * Records a planning failure on a backfilling target — only while it holds the slot of planning
   * attempt {@code attempt}, if given — or returns {@code null} and changes nothing.
   */
  Recorded recordFailure(PlanningFailure failure, Long attempt) {
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
      wakeups.wakeNextInLine();
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
      wakeups.wakeNextInLine();
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
    ObservedRun outcome = runs.findOutcome(observation.runId()).orElse(null);
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
    for (RunToStop run : replanned.stopping()) {
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
      wakeups.wakeNextInLine();
    }
    return replanned.result();
  }
}
