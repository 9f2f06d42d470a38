package dev.dripline.activities.run;

import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.runtime.run.BatchRequeue;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.audit.AuditEvent;
import dev.dripline.store.audit.AuditEventRepository;
import dev.dripline.store.counters.BatchOutcomeCounterRepository;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchDone;
import dev.dripline.store.run.BatchRange;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchTally;
import dev.dripline.store.run.ClaimRow;
import dev.dripline.store.run.ReleasedBatch;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.run.RunSettingsView;
import dev.dripline.store.run.RunState;
import dev.dripline.workflows.run.AuditRecord;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.CapRecord;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.ClaimResult;
import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.FinishRequest;
import dev.dripline.workflows.run.FinishResult;
import dev.dripline.workflows.run.RequeueRequest;
import dev.dripline.workflows.run.RequeueResult;
import dev.dripline.workflows.run.RunActivities;
import dev.dripline.workflows.run.RunEnding;
import dev.dripline.workflows.run.RunRef;
import dev.dripline.workflows.run.RunSettings;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.StartResult;
import dev.dripline.workflows.run.StatusChange;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link RunActivities} on PostgreSQL.
 *
 * <p>Every write is a compare-and-set on the row's status (or the claim token), inside an explicit
 * transaction, so a local activity retried after a lost response, or run twice by two executions
 * racing on one run, changes nothing twice. Batch outcomes (failed here, stopped by {@link
 * #finish}) are counted in {@code dripline_batches_finished_total} inside the transaction of the
 * compare-and-set that records them, by the rows it actually changed.
 *
 * <p>A run's lifecycle statements are {@link RunRepository}'s and {@link BatchRepository}'s, in
 * Micronaut Data transactions ({@link DataTransactions}, programmatic: no AOP on an activity
 * implementation) whose connection also carries the outcome counters' statements; the claim and a
 * batch's failure, the hot path, too.
 */
@Singleton
public class RunActivitiesImpl implements RunActivities {
  /** How often a run held by the brake (or a hold not configured here) claims again. */
  static final long BRAKE_LOOK_MILLIS = 1_000;

  /** The shortest wait of a held run between claims; a run waiting in its pool's line waits it. */
  static final long MIN_LOOK_MILLIS = 250;

  /**
   * The start of the hold of a run waiting for a slot of its pool ({@code pool:<name>}, answered by
   * {@code dripline_claim_batches}). Not throttled time: the run waits its turn in the line.
   */
  static final String POOL_HOLD = "pool:";

  private final RunRepository runs;
  private final BatchRepository batches;
  private final BatchRequeue requeues;
  private final DataTransactions transactions;
  private final EngineConfig engine;
  private final BatchMetrics metrics;
  private final BatchOutcomeCounterRepository counters;
  private final ThrottleChecks checks;
  private final AuditEventRepository audit;

  public RunActivitiesImpl(
      RunRepository runs,
      BatchRepository batches,
      BatchRequeue requeues,
      DataTransactions transactions,
      EngineConfig engine,
      BatchMetrics metrics,
      BatchOutcomeCounterRepository counters,
      ThrottleChecks checks,
      AuditEventRepository audit) {
    this.runs = runs;
    this.batches = batches;
    this.requeues = requeues;
    this.transactions = transactions;
    this.engine = engine;
    this.metrics = metrics;
    this.counters = counters;
    this.checks = checks;
    this.audit = audit;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The cap the loading execution will enforce is computed here from what was read, with this
   * worker's safety cap, and recorded when the run's record holds another (a redeploy lowered or
   * raised the definition's or the engine's cap since it was recorded): the record — what the API
   * shows and what a chain's claim of its next batch reads — then holds the cap the run enforces.
   * Written here, inside the local activity, the workflow's commands are those it always emitted.
   */
  @Override
  public RunSettings loadRun(RunRef run) {
    Optional<RunSettingsView> found = runs.findSettings(run.runId());
    if (found.isEmpty()) {
      return RunSettings.notFound(run.runId());
    }
    RunSettingsView r = found.get();
    RunSettings settings = settings(run, r);
    if (r.maxParallelBatches() != settings.effectiveCap()) {
      transactions.inTransaction(
          connection ->
              runs.recordLoadedCap(
                  run.runId(), r.requestedMaxParallelBatches(), settings.effectiveCap()));
    }
    return settings;
  }

  private RunSettings settings(RunRef run, RunSettingsView r) {
    return new RunSettings(
        run.runId(),
        true,
        r.backfill(),
        RunStatus.fromWire(r.status()),
        r.batchSize(),
        r.requestedMaxParallelBatches(),
        r.definitionCap(),
        engine.safetyCap(),
        r.startAt(),
        r.startedAt(),
        r.totalKeys(),
        r.processedKeys(),
        r.planDone(),
        engine.batchPolicy(),
        engine.planPageBatches(),
        engine.maxBatchesPerExecution(),
        engine.batchChainTime().toMillis(),
        r.stopRequested(),
        engine.endedRunRetryWindow().toMillis(),
        r.failureBudgetSpent());
  }

  /**
   * {@inheritDoc}
   *
   * <p>A repeated call for a run this call already started answers {@code started=true} again, with
   * the same {@code startedAt}.
   */
  @Override
  public StartResult markRunning(RunRef run) {
    return transactions.inTransaction(
        connection -> {
          // The compare-and-set locks the row it moves: the read after it sees that very row.
          boolean moved = runs.markRunning(run.runId()) == 1;
          Optional<RunSettingsView> found = runs.findSettings(run.runId());
          if (found.isEmpty()) {
            return new StartResult(false, null, null);
          }
          RunStatus status = RunStatus.fromWire(found.get().status());
          if (moved) {
            // Running, or stopped: a stop was recorded while it was pending (R2).
            return new StartResult(status == RunStatus.RUNNING, status, found.get().startedAt());
          }
          // Not pending: stopped or deleted while waiting, or a repeat of a call that won.
          // Only the run's own workflow moves a pending run on, so finding it running means this
          // call is a repeat (local activity re-run after a lost workflow task) and gets the first
          // call's answer; anything else would end the workflow of a live run.
          return new StartResult(status == RunStatus.RUNNING, status, found.get().startedAt());
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>The cap is enforced where slots are recorded, not only in the workflow's memory (R5b): the
   * claim is one call of {@code dripline_claim_batches} (migration V20), which under the run row's
   * lock takes at most the run's cap less the batches already holding a slot, whoever asks — two
   * attempts of this local activity running at once (its start-to-close timeout schedules another
   * without interrupting the first), a repeated call (answered from the rows its token took), or an
   * execution that does not know of slots an earlier one left held. So are the holds (P2, P3):
   * while the brake or a check that applies to the run holds it ({@code dripline_run_holds}), the
   * claim takes nothing and says why; the time it is held is booked on the run's row. A run whose
   * failure budget is spent (P6b) is answered {@code failure-budget}, and one whose pool has no
   * slot for it now (P5) {@code pool:<name>}; neither is booked as held time (V21).
   */
  @Override
  public ClaimResult claimPending(ClaimRequest request) {
    List<ClaimRow> rows =
        batches.claim(request.runId(), request.token(), request.limit(), engine.safetyCap());
    if (rows.isEmpty()) {
      return new ClaimResult(List.of());
    }
    ClaimRow first = rows.get(0);
    Long heldSince = first.heldSince() == null ? null : first.heldSince().toEpochMilli();
    List<String> holds = first.holdList();
    if (!holds.isEmpty()) {
      return new ClaimResult(
          List.of(), false, holds, lookAgainMillis(holds), first.throttledMillis(), heldSince);
    }
    List<BatchRef> claimed = new ArrayList<>();
    for (ClaimRow row : rows) {
      if (row.number() != null) {
        claimed.add(batchRef(row.batch()));
      }
    }
    if (claimed.size() > request.limit()) {
      // Never reached; were it, the workflow would start more batches than it has slots for.
      throw new IllegalStateException(
          "claim of run " + request.runId() + " took " + claimed.size() + " > " + request.limit());
    }
    return new ClaimResult(
        List.copyOf(claimed), first.slotsFull(), List.of(), 0, first.throttledMillis(), heldSince);
  }

  /**
   * How long a held run's workflow waits before it claims again: half the shortest interval of the
   * configured checks that hold it (a check's row changes at most once an interval), {@link
   * #BRAKE_LOOK_MILLIS} for the brake and for holds not configured on this worker, never under
   * {@link #MIN_LOOK_MILLIS}.
   */
  long lookAgainMillis(List<String> reasons) {
    long look = Long.MAX_VALUE;
    for (String reason : reasons) {
      if (reason.startsWith(POOL_HOLD)) {
        look = Math.min(look, MIN_LOOK_MILLIS);
        continue;
      }
      long each =
          checks
              .named(reason)
              .map(check -> check.interval().toMillis() / 2)
              .orElse(BRAKE_LOOK_MILLIS);
      look = Math.min(look, each);
    }
    return Math.max(MIN_LOOK_MILLIS, look);
  }

  private static BatchRef batchRef(BatchRange batch) {
    return new BatchRef(
        batch.number(), batch.startKey().toString(), batch.endKey().toString(), batch.size());
  }

  /**
   * {@inheritDoc}
   *
   * <p>While an attempt Temporal gave up on still holds the batch with a live lease (it has not
   * stopped yet: it fences itself before the lease runs out), the slot is not released: this call
   * fails, retryably, and the local activity's retries wait the lease out.
   */
  @Override
  public void recordBatchFailure(BatchFailure failure) {
    List<BatchMetrics.Outcome> failed =
        transactions.inTransaction(
            connection -> {
              if (RunSlots.heldLive(batches, failure.runId(), failure.number(), null)) {
                throw ApplicationFailure.newFailure(
                    "batch "
                        + failure.number()
                        + " of run "
                        + failure.runId()
                        + " is still held by a live attempt; its slot is released once that"
                        + " attempt's lease runs out",
                    DriplineFailure.SLOT_STILL_HELD.name());
              }
              // The run's row, then the batches, then counter rows, as every statement of the
              // engine takes them (migration V25): the failure budget's update below writes the
              // run's row, and the release of the chain writes batches after the failure's
              // counters.
              runs.lockRow(failure.runId());
              batches.lockForFailure(failure.runId(), failure.number());
              List<BatchMetrics.Outcome> outcomes = new ArrayList<>();
              // No row: a repeat, or the batch lost its slot: nothing recorded or counted.
              Optional<BatchDone> done =
                  batches.fail(
                      failure.runId(), failure.number(), ErrorText.truncate(failure.error()));
              if (done.isPresent()) {
                BatchMetrics.Outcome outcome =
                    outcome(done.get().backfill(), done.get().slotSeconds());
                countFailed(outcome, failure.number());
                outcomes.add(outcome);
              }
              releaseChained(failure, outcomes);
              if (!outcomes.isEmpty()) {
                runs.spendFailureBudget(failure.runId());
              }
              return outcomes;
            });
    failed.forEach(metrics::recordSlotTime);
  }

  /**
   * Counts failed batch {@code number} in {@code dripline_batches_finished_total}, in its shard, in
   * the transaction that failed it ({@link BatchOutcomeCounterRepository#addOutcomes}).
   */
  private void countFailed(BatchMetrics.Outcome outcome, int number) {
    counters.addOutcomes(outcome.backfill(), "failed", ShardedCounters.shardOf(number), 1);
  }

  /** A recorded outcome as {@link BatchMetrics} records it. */
  private static BatchMetrics.Outcome outcome(String backfill, Double slotSeconds) {
    return new BatchMetrics.Outcome(
        backfill, slotSeconds == null ? null : Math.max(0, slotSeconds));
  }

  /**
   * The batch the failed activity's chain still held (its {@code chain_head} is the activity's
   * batch, it is still {@code running}): with its activity gone nothing would ever finish it, and
   * the run could never end. It goes back to {@code pending} while it has attempts left by its own
   * count, and is failed (and counted) once it has none — whatever killed its attempts, e.g. a
   * worker killed again and again, was not necessarily the batch's doing.
   */
  private void releaseChained(BatchFailure failure, List<BatchMetrics.Outcome> outcomes) {
    List<ReleasedBatch> released =
        batches.releaseChainOfFailed(
            failure.runId(),
            failure.number(),
            engine.batchMaxAttempts(),
            ErrorText.truncate(failure.error()));
    for (ReleasedBatch batch : released) {
      if ("failed".equals(batch.status())) {
        BatchMetrics.Outcome outcome = outcome(batch.backfill(), batch.slotSeconds());
        countFailed(outcome, batch.number());
        outcomes.add(outcome);
      }
    }
  }

  @Override
  public RequeueResult requeue(RequeueRequest request) {
    BatchRequeue.Outcome outcome = requeues.requeue(request.runId(), request.token());
    return new RequeueResult(outcome.requeued(), outcome.statusAfter());
  }

  @Override
  public void recordStatus(StatusChange change) {
    if (change.status() != RunStatus.RUNNING
        && change.status() != RunStatus.PAUSED
        && change.status() != RunStatus.PENDING) {
      throw ApplicationFailure.newNonRetryableFailure(
          "recordStatus accepts running, paused or pending, not " + change.status(),
          IllegalArgumentException.class.getName());
    }
    transactions.inTransaction(
        connection -> {
          int recorded = runs.recordStatus(change.runId(), change.status().wire());
          if (recorded == 1 && change.status() == RunStatus.RUNNING) {
            // A resume: a failure budget the run paused itself for counts afresh (P6b).
            runs.renewFailureBudget(change.runId(), true);
          }
          return recorded;
        });
  }

  @Override
  public void recordStopRequested(RunRef run) {
    runs.recordStopRequested(run.runId());
  }

  @Override
  public void recordCap(CapRecord record) {
    transactions.inTransaction(
        connection -> runs.recordCap(record.runId(), record.requestedCap(), record.effectiveCap()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>The entry's actor is {@code temporal}; its dedup key makes a retried call a no-op.
   */
  @Override
  public void recordAudit(AuditRecord record) {
    audit.record(
        AuditEvent.TEMPORAL,
        record.action(),
        record.runId() > 0 ? record.runId() : null,
        null,
        null,
        record.detail(),
        record.outcome(),
        null,
        record.problem(),
        record.dedupKey());
  }

  /**
   * {@inheritDoc}
   *
   * <p>Only slots whose holder is provably gone (R5b): a batch {@code enqueued} for an activity of
   * the caller's — which holds none when it asks — or of an execution that ended (a claim is
   * recorded before its activity is scheduled, and an activity that starts after its batch went
   * back to pending finds no slot and skips it); a batch {@code running} whose holder's lease has
   * run out (a live holder renews it, and stops before it can run out). A running batch with a live
   * lease is left to its holder, which records it.
   */
  @Override
  public int recoverSlots(RunRef run) {
    return transactions.inTransaction(connection -> batches.recoverSlots(run.runId()));
  }

  @Override
  public FinishResult finish(FinishRequest request) {
    return transactions.inTransaction(connection -> finishLocked(request));
  }

  private FinishResult finishLocked(FinishRequest request) throws SQLException {
    // The row lock serialises finish against requeue (API retry) and a racing execution.
    Optional<RunState> locked = runs.lock(request.runId());
    if (locked.isEmpty()) {
      return new FinishResult(true, null, null);
    }
    RunStatus status = RunStatus.fromWire(locked.get().status());
    if (status.isTerminal()) {
      return new FinishResult(
          true, status, locked.get().finishedAt(), locked.get().processedKeys());
    }
    if (request.stopping()) {
      // Only the batches this call moved: a repeated stop finds none pending and counts none.
      int stopped = batches.stopPending(request.runId());
      // Only rows this transaction already holds (run, batches) are written after this.
      if (stopped > 0) {
        counters.addOutcomes(
            locked.get().backfill(), "stopped", ShardedCounters.shardOf(0), stopped);
      }
    }
    BatchTally tally = batches.tally(request.runId());
    Optional<RunEnding> ending =
        RunEnding.of(
            request.stopping(),
            request.error(),
            locked.get().planDone(),
            tally.open(),
            tally.failed());
    if (ending.isEmpty()) {
      return new FinishResult(false, status, null);
    }
    RunStatus terminal = ending.get().status();
    runs.markEnded(request.runId(), terminal.wire(), ErrorText.truncate(ending.get().error()));
    // Read back under the lock, after the last batch was seen finished: nothing can add to the
    // processed keys any more, and finished_at is this transaction's now().
    RunState ended = runs.lock(request.runId()).orElseThrow();
    return new FinishResult(true, terminal, ended.finishedAt(), ended.processedKeys());
  }
}
