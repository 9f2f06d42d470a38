package dev.dripline.activities.run;

import dev.dripline.store.config.EngineConfig;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchRequeue;
import dev.dripline.store.run.BatchStore;
import dev.dripline.store.run.BatchTally;
import dev.dripline.store.run.RunSettingsView;
import dev.dripline.store.run.RunState;
import dev.dripline.store.run.RunStore;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchGroups;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.CapPolicy;
import dev.dripline.workflows.run.CapRecord;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.ClaimResult;
import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.FinishRequest;
import dev.dripline.workflows.run.FinishResult;
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
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * <p>A run's lifecycle statements are {@link RunStore}'s and {@link BatchStore}'s, in Micronaut
 * Data transactions ({@link DataTransactions}, programmatic: no AOP on an activity implementation)
 * whose connection also carries the outcome counters' statements. The claim and a batch's failure,
 * the hot path, still run on {@link Database}'s explicit JDBC transactions.
 */
@Singleton
public class RunActivitiesImpl implements RunActivities {
  private static final String BATCH_COLUMNS = "number, start_key, end_key, size";

  private final Database database;
  private final RunStore runs;
  private final BatchStore batches;
  private final BatchRequeue requeues;
  private final DataTransactions transactions;
  private final EngineConfig engine;
  private final BatchMetrics metrics;

  public RunActivitiesImpl(
      Database database,
      RunStore runs,
      BatchStore batches,
      BatchRequeue requeues,
      DataTransactions transactions,
      EngineConfig engine,
      BatchMetrics metrics) {
    this.database = database;
    this.runs = runs;
    this.batches = batches;
    this.requeues = requeues;
    this.transactions = transactions;
    this.engine = engine;
    this.metrics = metrics;
  }

  @Override
  public RunSettings loadRun(RunRef run) {
    Optional<RunSettingsView> found = runs.findSettings(run.runId());
    if (found.isEmpty()) {
      return RunSettings.notFound(run.runId());
    }
    RunSettingsView r = found.get();
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
        engine.batchGroups());
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
          if (moved) {
            return new StartResult(true, RunStatus.RUNNING, found.get().startedAt());
          }
          // Not pending: stopped or deleted while waiting, or a repeat of a call that won.
          RunStatus status = RunStatus.fromWire(found.get().status());
          // Only the run's own workflow moves a pending run on, so finding it running means this
          // call is a repeat (local activity re-run after a lost workflow task) and gets the first
          // call's answer; anything else would end the workflow of a live run.
          return new StartResult(status == RunStatus.RUNNING, status, found.get().startedAt());
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>The cap is enforced here, not only in the workflow's memory (R5b): under the run row's lock,
   * a claim takes at most the run's cap less the batches already holding a slot, whoever asks — two
   * attempts of this local activity running at once (its start-to-close timeout schedules another
   * without interrupting the first), a repeated call, or an execution that does not know of slots
   * an earlier one left held.
   */
  @Override
  public ClaimResult claimPending(ClaimRequest request) {
    return database.inTransaction(
        connection -> {
          Integer cap = lockedCap(connection, request.runId());
          if (cap == null) {
            return new ClaimResult(List.of());
          }
          // A repeated claim (the local activity's response was lost) is answered from the rows
          // the token already marked, so it never takes a second set of slots. Only rows still
          // holding a slot count: a batch is not processed before its claim returned, while a
          // token reused by a later execution (a revived run starts counting again) must not be
          // mistaken for a repeat because of batches that finished long ago. Under the lock, a
          // concurrent attempt with the same token sees the rows the first one committed.
          List<BatchRef> already = claimedBy(connection, request);
          if (!already.isEmpty()) {
            return new ClaimResult(already);
          }
          int room = cap - RunSlots.holders(connection, request.runId());
          int limit = Math.min(request.limit(), room);
          boolean slotsFull = room < request.limit();
          if (limit < 1) {
            return new ClaimResult(List.of(), slotsFull);
          }
          // Two statements, not an UPDATE over "IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)": that
          // subquery can be evaluated more than once in one UPDATE, each time skipping the rows it
          // locked before, so the UPDATE took more rows than its limit (F2 saw 25 and 73 batches
          // claimed at once with a cap of 8). The rows picked here are locked by this transaction.
          if (request.groupsFrom() != null) {
            return claimGroups(connection, request, cap, limit, slotsFull);
          }
          List<Integer> picked = new ArrayList<>();
          try (PreparedStatement pick =
              connection.prepareStatement(
                  "select number from batches where run_id = ? and status = 'pending'"
                      + " order by number limit ? for update skip locked")) {
            pick.setLong(1, request.runId());
            pick.setInt(2, limit);
            try (ResultSet rs = pick.executeQuery()) {
              while (rs.next()) {
                picked.add(rs.getInt(1));
              }
            }
          }
          if (picked.isEmpty()) {
            return new ClaimResult(List.of(), false);
          }
          List<BatchRef> claimed = new ArrayList<>();
          try (PreparedStatement claim =
              connection.prepareStatement(
                  "update batches set status = 'enqueued', claim_token = ?, chain_head = null,"
                      + " holder = null, lease_until = null, enqueued_at = now()"
                      + " where run_id = ? and number = any (?) and status = 'pending'"
                      + " returning "
                      + BATCH_COLUMNS)) {
            claim.setLong(1, request.token());
            claim.setLong(2, request.runId());
            claim.setArray(3, connection.createArrayOf("integer", picked.toArray()));
            try (ResultSet rs = claim.executeQuery()) {
              while (rs.next()) {
                claimed.add(batchRef(rs));
              }
            }
          }
          if (claimed.size() > limit) {
            // Never reached; were it, the transaction rolls back and the claim is retried.
            throw new IllegalStateException(
                "claim of run " + request.runId() + " took " + claimed.size() + " > " + limit);
          }
          claimed.sort(Comparator.comparingInt(BatchRef::number));
          return new ClaimResult(List.copyOf(claimed), slotsFull && claimed.size() == limit);
        });
  }

  /**
   * A claim for groups: reads the pending batches from {@code request.groupsFrom()} on (up to
   * {@link BatchGroups#lookahead}), cuts them into groups of {@link BatchGroups#size} consecutive
   * ones, and claims the heads of the first {@code limit} groups; the other members stay pending,
   * for their group's activity to take.
   */
  private static ClaimResult claimGroups(
      Connection connection, ClaimRequest request, int cap, int limit, boolean slotsFull)
      throws SQLException {
    List<Integer> pending = new ArrayList<>();
    try (PreparedStatement pick =
        connection.prepareStatement(
            "select number from batches where run_id = ? and status = 'pending' and number >= ?"
                + " order by number limit ?")) {
      pick.setLong(1, request.runId());
      pick.setInt(2, request.groupsFrom());
      pick.setInt(3, BatchGroups.lookahead(cap));
      try (ResultSet rs = pick.executeQuery()) {
        while (rs.next()) {
          pending.add(rs.getInt(1));
        }
      }
    }
    if (pending.isEmpty()) {
      return new ClaimResult(List.of(), false);
    }
    int size = BatchGroups.size(pending.size(), cap);
    List<Integer> heads = new ArrayList<>();
    Map<Integer, Integer> ends = new HashMap<>();
    for (int i = 0; i < pending.size() && heads.size() < limit; i += size) {
      heads.add(pending.get(i));
      ends.put(pending.get(i), pending.get(Math.min(i + size, pending.size()) - 1));
    }
    List<BatchRef> claimed = new ArrayList<>();
    try (PreparedStatement claim =
        connection.prepareStatement(
            "update batches set status = 'enqueued', claim_token = ?, chain_head = null,"
                + " holder = null, lease_until = null, enqueued_at = now()"
                + " where run_id = ? and number = any (?) and status = 'pending'"
                + " returning "
                + BATCH_COLUMNS)) {
      claim.setLong(1, request.token());
      claim.setLong(2, request.runId());
      claim.setArray(3, connection.createArrayOf("integer", heads.toArray()));
      try (ResultSet rs = claim.executeQuery()) {
        while (rs.next()) {
          claimed.add(batchRef(rs));
        }
      }
    }
    claimed.sort(Comparator.comparingInt(BatchRef::number));
    List<Integer> groupEnds = claimed.stream().map(b -> ends.get(b.number())).toList();
    return new ClaimResult(List.copyOf(claimed), slotsFull && claimed.size() == limit, groupEnds);
  }

  /**
   * Locks the run row (RunSlots) and reads its cap: the recorded one, never above the definition's
   * or the engine's current cap (a redeploy may have lowered them); null if the run is gone.
   */
  private Integer lockedCap(Connection connection, long runId) throws SQLException {
    if (!RunSlots.lockRun(connection, runId)) {
      return null;
    }
    try (PreparedStatement select =
        connection.prepareStatement(
            "select r.max_parallel_batches, d.max_parallel_batches as definition_cap"
                + " from runs r left join backfill_definitions d on d.name = r.backfill"
                + " where r.id = ?")) {
      select.setLong(1, runId);
      try (ResultSet rs = select.executeQuery()) {
        rs.next();
        return CapPolicy.effective(
            SqlValues.nullableInt(rs, "definition_cap"),
            rs.getInt("max_parallel_batches"),
            engine.safetyCap());
      }
    }
  }

  private static List<BatchRef> claimedBy(Connection connection, ClaimRequest request)
      throws SQLException {
    List<BatchRef> claimed = new ArrayList<>();
    try (PreparedStatement select =
        connection.prepareStatement(
            "select "
                + BATCH_COLUMNS
                + " from batches where run_id = ? and claim_token = ?"
                + " and status in ('enqueued', 'running') order by number")) {
      select.setLong(1, request.runId());
      select.setLong(2, request.token());
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          claimed.add(batchRef(rs));
        }
      }
    }
    return List.copyOf(claimed);
  }

  private static BatchRef batchRef(ResultSet rs) throws SQLException {
    return new BatchRef(
        rs.getInt("number"), rs.getLong("start_key"), rs.getLong("end_key"), rs.getInt("size"));
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
        database.inTransaction(
            connection -> {
              if (RunSlots.heldLive(
                  connection, failure.runId(), RunSlots.Held.BATCH, failure.number(), null)) {
                throw ApplicationFailure.newFailure(
                    "batch "
                        + failure.number()
                        + " of run "
                        + failure.runId()
                        + " is still held by a live attempt; its slot is released once that"
                        + " attempt's lease runs out",
                    DriplineFailure.SLOT_STILL_HELD.name());
              }
              List<BatchMetrics.Outcome> outcomes = new ArrayList<>();
              try (PreparedStatement update =
                  connection.prepareStatement(
                      "update batches b set status = 'failed', error = ?, finished_at = now(),"
                          + " lease_until = null"
                          + " from runs r where r.id = b.run_id and b.run_id = ? and b.number = ?"
                          + " and b.status in ('enqueued', 'running')"
                          + " returning r.backfill, "
                          + BatchMetrics.SLOT_SECONDS
                          + " as slot_seconds")) {
                update.setString(1, ErrorText.truncate(failure.error()));
                update.setLong(2, failure.runId());
                update.setInt(3, failure.number());
                try (ResultSet rs = update.executeQuery()) {
                  // No row: a repeat, or the batch lost its slot: nothing recorded or counted.
                  if (rs.next()) {
                    BatchMetrics.Outcome outcome = BatchMetrics.Outcome.of(rs);
                    BatchMetrics.countFinished(
                        connection, outcome.backfill(), "failed", failure.number(), 1);
                    outcomes.add(outcome);
                  }
                }
              }
              releaseChained(connection, failure, outcomes);
              return outcomes;
            });
    failed.forEach(metrics::recordSlotTime);
  }

  /**
   * The batch the failed activity's chain still held (its {@code chain_head} is the activity's
   * batch, it is still {@code running}): with its activity gone nothing would ever finish it, and
   * the run could never end. It goes back to {@code pending} while it has attempts left by its own
   * count, and is failed (and counted) once it has none — whatever killed its attempts, e.g. a
   * worker killed again and again, was not necessarily the batch's doing.
   */
  private void releaseChained(
      Connection connection, BatchFailure failure, List<BatchMetrics.Outcome> outcomes)
      throws SQLException {
    int maxAttempts = engine.batchMaxAttempts();
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set status = case when b.attempts < ? then 'pending' else 'failed'"
                + " end, error = ?, chain_head = null, claim_token = null,"
                + " finished_at = case when b.attempts < ? then null else now() end"
                + ", holder = null, lease_until = null"
                + " from runs r where r.id = b.run_id and b.run_id = ? and b.chain_head = ?"
                + " and b.status = 'running' and coalesce(b.lease_until, '-infinity') < now()"
                + " returning b.number, b.status, r.backfill, "
                + BatchMetrics.SLOT_SECONDS
                + " as slot_seconds")) {
      update.setInt(1, maxAttempts);
      update.setString(2, ErrorText.truncate(failure.error()));
      update.setInt(3, maxAttempts);
      update.setLong(4, failure.runId());
      update.setInt(5, failure.number());
      try (ResultSet rs = update.executeQuery()) {
        while (rs.next()) {
          if ("failed".equals(rs.getString("status"))) {
            BatchMetrics.Outcome outcome = BatchMetrics.Outcome.of(rs);
            BatchMetrics.countFinished(
                connection, outcome.backfill(), "failed", rs.getInt("number"), 1);
            outcomes.add(outcome);
          }
        }
      }
    }
  }

  @Override
  public RequeueResult requeue(RunRef run) {
    BatchRequeue.Outcome outcome = requeues.requeue(run.runId());
    return new RequeueResult(outcome.requeued(), outcome.statusAfter());
  }

  @Override
  public void recordStatus(StatusChange change) {
    if (change.status() != RunStatus.RUNNING && change.status() != RunStatus.PAUSED) {
      throw ApplicationFailure.newNonRetryableFailure(
          "recordStatus accepts running or paused, not " + change.status(),
          IllegalArgumentException.class.getName());
    }
    transactions.inTransaction(
        connection -> runs.recordStatus(change.runId(), change.status().wire()));
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
    return transactions.inTransaction(connection -> finish(connection, request));
  }

  private FinishResult finish(Connection connection, FinishRequest request) throws SQLException {
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
      BatchMetrics.countFinished(connection, locked.get().backfill(), "stopped", 0, stopped);
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
