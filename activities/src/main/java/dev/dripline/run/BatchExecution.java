package dev.dripline.run;

import dev.dripline.config.EngineConfig;
import dev.dripline.db.Database;
import dev.dripline.db.DatabaseOutage;
import dev.dripline.db.ShardedCounters;
import dev.dripline.registry.BackfillRegistry;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TransactionalBackfillDefinition;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at one batch, independent of Temporal's activity context so it can be called (and
 * tested) directly; {@link BatchActivitiesImpl} adds heartbeats around it.
 *
 * <p>One attempt may go on, in the same slot, with further pending batches of the run (a chain, see
 * {@link #process(BatchWork, BooleanSupplier)}): per batch that costs one transaction and one
 * statement of bookkeeping (its completion and the next claim together) instead of a round trip
 * through Temporal (three history events, workflow tasks and a claim).
 *
 * <p>Invariants: the definition runs only for a batch that holds a slot ({@code enqueued} or {@code
 * running}); a batch becomes {@code completed} at most once, and its size is added to the run's
 * processed keys ({@code run_key_counts}) in the same transaction as that transition, so a repeated
 * attempt never counts a key twice. The batch is counted in {@code dripline_batches_finished_total}
 * in that same transaction, and its slot time recorded only when that transaction made the
 * transition. Both counters are sharded by batch number ({@link ShardedCounters}): completions of
 * one run do not queue on one row.
 *
 * <p>PostgreSQL outages: an attempt that loses its connection ({@link DatabaseOutage}) — in its own
 * statements or in the definition's — waits for PostgreSQL to answer again (heartbeating all the
 * while, up to {@code database-outage-wait}) and carries on with the batch it holds, running the
 * definition on it again if its record had not committed (processing a batch twice is harmless,
 * PRODUCT §2), rather than spending the batch's attempts on the outage. A statement retried after
 * its connection broke may have committed already; each retry is safe for that: the
 * compare-and-sets match no row a second time, and a chain first looks for the batch an earlier try
 * may have taken ({@code chain_head}), as a new attempt after a crash does.
 */
@Singleton
public class BatchExecution {
  private static final Logger LOG = LoggerFactory.getLogger(BatchExecution.class);

  /** Runs of the definition on one batch, within one attempt, that an outage may cost. */
  private static final int MAX_OUTAGE_RERUNS = 5;

  /** How long a chain waits for planning to add a batch when none is pending, and how often. */
  static final long PLAN_WAIT_MILLIS = 1_000;

  private static final long PLAN_POLL_MILLIS = 50;

  private final Database database;
  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;
  private final BatchMetrics metrics;
  private final Duration outageWait;

  public BatchExecution(
      Database database,
      BackfillRegistry registry,
      RunOptionsReader optionsReader,
      BatchMetrics metrics,
      EngineConfig engine) {
    this.database = database;
    this.registry = registry;
    this.optionsReader = optionsReader;
    this.metrics = metrics;
    this.outageWait = engine.databaseOutageWait();
  }

  /** What an attempt needs from the batch row it marked running. */
  private record Started(int number, KeyRange range, int size, String options) {}

  /** Columns of {@link Started}, from a statement over {@code batches b} and {@code runs r}. */
  private static final String STARTED_COLUMNS =
      " returning b.number, b.start_key, b.end_key, b.size, r.options::text as options";

  /** Processes the batch, without chaining. */
  public BatchResult process(BatchWork work) {
    return process(work, () -> true);
  }

  /**
   * Processes the head batch unless it was completed already or no longer holds a slot; then, for
   * as long as {@link BatchWork#chainMillis()} allows, goes on in the same slot with the run's
   * lowest pending batch, one at a time (a chain). A chained batch is taken only while the run is
   * running, not stopping, and its cap still covers this activity's lane, so stop, pause and a
   * lowered cap end a chain at its next batch, and the cap holds: the chain holds one batch at a
   * time in the slot the workflow counts for it.
   *
   * @param mayContinue asked before each chained batch; false once the attempt was cancelled or its
   *     heartbeats rejected (another attempt may hold the slot)
   * @throws ApplicationFailure of type {@link DriplineFailure#BATCH_PERMANENT} (non-retryable) or
   *     {@link DriplineFailure#BATCH_FAILED} (retryable) when the definition fails on the head
   *     batch; a chained batch that fails is handed back in the result instead
   */
  public BatchResult process(BatchWork work, BooleanSupplier mayContinue) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(work.chainMillis());
    BackfillDefinition definition = registry.require(work.backfill());
    BatchResult head = processHead(definition, work, mayContinue);
    if (work.chainMillis() <= 0 || work.lane() < 1 || head.outcome() == BatchOutcome.SKIPPED) {
      return head;
    }
    long runId = work.runId();
    int headNumber = work.batch().number();
    int chained = 0;
    long chainedKeys = 0;
    int outageReruns = 0;
    // A batch this chain held when an earlier attempt of this activity died: it holds the slot.
    Started next =
        store(connection -> resumeHeld(connection, runId, headNumber, true), null, mayContinue);
    if (next == null && mayGoOn(deadline, mayContinue)) {
      next = claimOrAwait(runId, headNumber, work.lane(), deadline, mayContinue);
    }
    while (next != null) {
      Started batch = next;
      // The completion and the next claim are one statement and commit together: one commit per
      // chained batch (with a transactional definition, the batch's own writes too).
      Recorded recorded;
      try {
        recorded =
            runAndRecord(
                definition,
                runId,
                batch,
                connection ->
                    mayGoOn(deadline, mayContinue)
                        ? completeAndClaimNext(
                            connection, runId, batch.number(), headNumber, work.lane())
                        : new Recorded(complete(connection, runId, batch.number()), null));
      } catch (Exception e) {
        if (DatabaseOutage.isConnectionFailure(e)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, batch.number(), e, mayContinue)) {
          // Whether the batch's record committed is unknown: go on with what this chain holds —
          // the same batch if it did not (run again), the next one if it did, nothing if it
          // claimed none. Still this attempt: the attempts count is not raised again.
          next =
              store(
                  connection -> resumeHeld(connection, runId, headNumber, false),
                  null,
                  mayContinue);
          continue;
        }
        String error = attemptFailed(runId, batch.number(), e);
        // Its record may have committed unseen, with the claim of the next batch: that one goes
        // back to pending, or nobody would ever run it (F3 in docs/reliability.md).
        releaseHeld(runId, headNumber, batch.number());
        return new BatchResult(
            head.outcome(),
            head.size(),
            chained,
            chainedKeys,
            new BatchRef(
                batch.number(), batch.range().startKey(), batch.range().endKey(), batch.size()),
            error,
            e instanceof PermanentBackfillException);
      }
      if (recorded.completed() == null) {
        // Lost its slot meanwhile (the run's slots were recovered): whoever holds it counts it.
        break;
      }
      metrics.recordSlotTime(recorded.completed());
      chained++;
      chainedKeys += batch.size();
      next = recorded.next();
      if (next == null && mayGoOn(deadline, mayContinue)) {
        next = claimOrAwait(runId, headNumber, work.lane(), deadline, mayContinue);
      }
    }
    return new BatchResult(head.outcome(), head.size(), chained, chainedKeys, null, null, false);
  }

  /**
   * The chain's next batch: the run's lowest pending one or, while planning still adds batches (the
   * run running, not stopping, its cap covering {@code lane}, its plan not done), the first one
   * planned within {@link #PLAN_WAIT_MILLIS}. A chain that ended for want of a pending batch would
   * cost the workflow a round trip to start another when the page arrives (W2 in
   * docs/benchmarks.md: the first pages are small, and chains outran them).
   */
  private Started claimOrAwait(
      long runId, int headNumber, int lane, long deadline, BooleanSupplier mayContinue) {
    long waitUntil =
        Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PLAN_WAIT_MILLIS));
    while (true) {
      Started next =
          store(
              connection -> claimNext(connection, runId, headNumber, lane),
              // The first try may have taken a batch (and counted its attempt) and lost the answer:
              // resume that one.
              connection -> {
                Started held = resumeHeld(connection, runId, headNumber, false);
                return held != null ? held : claimNext(connection, runId, headNumber, lane);
              },
              mayContinue);
      if (next != null
          || System.nanoTime() - waitUntil >= 0
          || !mayContinue.getAsBoolean()
          || !store(connection -> planningGoesOn(connection, runId, lane), null, mayContinue)) {
        return next;
      }
      try {
        Thread.sleep(PLAN_POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
  }

  private static boolean planningGoesOn(Connection connection, long runId, int lane)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select 1 from runs where id = ? and status = 'running' and stop_requested_at is null"
                + " and not plan_done and ? <= max_parallel_batches")) {
      select.setLong(1, runId);
      select.setInt(2, lane);
      try (ResultSet rs = select.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * What recording a batch did: its completion (null if it no longer held its slot, so nothing was
   * recorded) and the batch the chain claimed next, if any.
   */
  private record Recorded(BatchMetrics.Outcome completed, Started next) {}

  /** SQLSTATE of {@code dripline_slot_lost} (migration V10): the batch no longer held its slot. */
  static final String SLOT_LOST = "DL001";

  /** Whether the chain may take another batch: time left, and the attempt still trusted. */
  private static boolean mayGoOn(long deadline, BooleanSupplier mayContinue) {
    return System.nanoTime() - deadline < 0 && mayContinue.getAsBoolean();
  }

  /**
   * Runs the definition on {@code batch}, then {@code record}, a statement that commits its
   * transaction in the same round trip — or, when the batch no longer held its slot, fails with
   * {@link #SLOT_LOST}, and the transaction is rolled back ({@link Recorded#completed()} null). A
   * {@link TransactionalBackfillDefinition} works inside that same transaction, so its writes
   * commit with the record or not at all: two round trips per chained batch, its own statements and
   * the record with COMMIT (W2 in docs/benchmarks.md); any other definition's batch costs the
   * record's one.
   *
   * @throws Exception what the definition (or, in its transaction, the recording) threw; nothing of
   *     the batch was recorded
   */
  private Recorded runAndRecord(
      BackfillDefinition definition, long runId, Started batch, Database.Work<Recorded> record)
      throws Exception {
    BackfillContext context = optionsReader.context(runId, definition, batch.options());
    TransactionalBackfillDefinition transactional =
        definition instanceof TransactionalBackfillDefinition t ? t : null;
    if (transactional == null) {
      definition.processBatch(context, batch.range());
    }
    try (Connection connection = database.dataSource().getConnection()) {
      connection.setAutoCommit(false);
      try {
        if (transactional != null) {
          transactional.processBatch(context, batch.range(), connection);
        }
        Recorded recorded;
        try {
          recorded = record.run(connection);
        } catch (SQLException e) {
          if (!SLOT_LOST.equals(e.getSQLState())) {
            throw e;
          }
          connection.rollback();
          return new Recorded(null, null);
        }
        connection.commit(); // nothing left to do: the record statement committed
        return recorded;
      } catch (Exception e) {
        Database.rollbackQuietly(connection, e);
        throw e;
      } finally {
        Database.resetAutoCommit(connection, true);
      }
    }
  }

  /**
   * Runs a statement of the engine's own on a connection of its own; when PostgreSQL cannot be
   * reached, waits until it answers and tries again, with {@code again} if given (for a statement
   * whose first try may have committed unseen).
   */
  private <T> T store(Database.Work<T> first, Database.Work<T> again, BooleanSupplier mayContinue) {
    Database.Work<T> work = first;
    while (true) {
      try {
        return database.withConnection(work);
      } catch (RuntimeException e) {
        if (!DatabaseOutage.isConnectionFailure(e) || !awaitDatabase(null, null, e, mayContinue)) {
          throw e;
        }
        if (again != null) {
          work = again;
        }
      }
    }
  }

  private boolean awaitDatabase(
      Long runId, Integer number, Exception failure, BooleanSupplier mayContinue) {
    LOG.warn(
        "Lost PostgreSQL{}: {}; waiting up to {} for it to answer",
        number == null ? "" : " in batch " + number + " of run " + runId,
        failure.toString(),
        outageWait);
    boolean back = database.awaitAvailable(outageWait, mayContinue);
    if (!back) {
      LOG.warn("PostgreSQL did not answer in time, or the attempt was cancelled; giving up");
    }
    return back;
  }

  /** Best effort: puts back to pending any batch this chain holds other than {@code except}. */
  private void releaseHeld(long runId, int headNumber, int except) {
    try {
      int released =
          database.withConnection(
              connection -> {
                try (PreparedStatement update =
                    connection.prepareStatement(
                        "update batches set status = 'pending', claim_token = null,"
                            + " chain_head = null where run_id = ? and chain_head = ?"
                            + " and status = 'running' and number <> ?")) {
                  update.setLong(1, runId);
                  update.setInt(2, headNumber);
                  update.setInt(3, except);
                  return update.executeUpdate();
                }
              });
      if (released > 0) {
        LOG.info(
            "Run {}: chain of batch {} released {} batch(es) it held back to pending",
            runId,
            headNumber,
            released);
      }
    } catch (RuntimeException e) {
      LOG.warn("Run {}: could not release the batches chain {} held", runId, headNumber, e);
    }
  }

  /** Records a failed attempt's error on its batch; the error's text. */
  private String attemptFailed(long runId, int number, Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String error = ErrorText.of(e);
    recordAttemptError(runId, number, error);
    return error;
  }

  /** The head batch: the one the workflow claimed for this activity. */
  private BatchResult processHead(
      BackfillDefinition definition, BatchWork work, BooleanSupplier mayContinue) {
    long runId = work.runId();
    int number = work.batch().number();
    // Single statements in autocommit: one round trip each, no row held across round trips.
    Started started =
        store(connection -> markRunning(connection, runId, number), null, mayContinue);
    if (started == null) {
      return store(connection -> notStarted(connection, runId, number), null, mayContinue);
    }
    int outageReruns = 0;
    while (true) {
      Recorded recorded;
      try {
        recorded =
            runAndRecord(
                definition,
                runId,
                started,
                connection -> new Recorded(complete(connection, runId, number), null));
      } catch (Exception e) {
        if (DatabaseOutage.isConnectionFailure(e)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, number, e, mayContinue)) {
          if (store(connection -> isRunning(connection, runId, number), null, mayContinue)) {
            continue; // its record did not commit: run it again, in the same attempt
          }
          // Its record committed unseen, or it lost its slot: whoever completed it counted it.
          return store(connection -> notStarted(connection, runId, number), null, mayContinue);
        }
        String error = attemptFailed(runId, number, e);
        if (e instanceof PermanentBackfillException) {
          throw ApplicationFailure.newNonRetryableFailureWithCause(
              error, DriplineFailure.BATCH_PERMANENT.name(), e);
        }
        throw ApplicationFailure.newFailureWithCause(error, DriplineFailure.BATCH_FAILED.name(), e);
      }
      if (recorded.completed() != null) {
        metrics.recordSlotTime(recorded.completed());
        return new BatchResult(BatchOutcome.COMPLETED, started.size());
      }
      // Lost its slot while running (run recovered or batch failed meanwhile): its keys are not
      // counted here; whoever holds the batch now will count them.
      return store(connection -> notStarted(connection, runId, number), null, mayContinue);
    }
  }

  private static boolean isRunning(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select 1 from batches where run_id = ? and number = ? and status = 'running'")) {
      select.setLong(1, runId);
      select.setInt(2, number);
      try (ResultSet rs = select.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static Started markRunning(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set status = 'running', attempts = b.attempts + 1,"
                + " started_at = coalesce(b.started_at, now())"
                + " from runs r where r.id = b.run_id"
                + " and b.run_id = ? and b.number = ? and b.status in ('enqueued', 'running')"
                + STARTED_COLUMNS)) {
      update.setLong(1, runId);
      update.setInt(2, number);
      return started(update);
    }
  }

  /**
   * The chained batch this chain holds; or null. {@code newAttempt}: an earlier attempt of this
   * activity held it (and died), so this is a new attempt at the batch and is counted; false when
   * this same attempt resumes it after losing PostgreSQL, which is not a new attempt (as for the
   * head batch, which an outage reruns in the same attempt).
   */
  private static Started resumeHeld(
      Connection connection, long runId, int headNumber, boolean newAttempt) throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set attempts = b.attempts + "
                + (newAttempt ? 1 : 0)
                + " from runs r where r.id = b.run_id"
                + " and b.run_id = ? and b.chain_head = ? and b.status = 'running'"
                + STARTED_COLUMNS)) {
      update.setLong(1, runId);
      update.setInt(2, headNumber);
      return started(update);
    }
  }

  /**
   * Takes the run's lowest pending batch into this chain (pending → running in one step), if the
   * run is running, not stopping, and its cap covers {@code lane}; null otherwise. SKIP LOCKED: two
   * chains, or a chain and the workflow's claim, never take the same batch.
   */
  private static Started claimNext(Connection connection, long runId, int headNumber, int lane)
      throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(CLAIM_NEXT + STARTED_COLUMNS)) {
      bindClaimNext(update, 1, runId, headNumber, lane);
      return started(update);
    }
  }

  private static Started started(PreparedStatement update) throws SQLException {
    try (ResultSet rs = update.executeQuery()) {
      return rs.next() ? started(rs) : null;
    }
  }

  /** The {@link #STARTED_COLUMNS} of the current row. */
  private static Started started(ResultSet rs) throws SQLException {
    return new Started(
        rs.getInt("number"),
        new KeyRange(rs.getLong("start_key"), rs.getLong("end_key")),
        rs.getInt("size"),
        rs.getString("options"));
  }

  private static BatchResult notStarted(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select status, size from batches where run_id = ? and number = ?")) {
      select.setLong(1, runId);
      select.setInt(2, number);
      try (ResultSet rs = select.executeQuery()) {
        if (rs.next() && BatchStatus.fromWire(rs.getString("status")) == BatchStatus.COMPLETED) {
          return new BatchResult(BatchOutcome.ALREADY_COMPLETED, rs.getInt("size"));
        }
        return new BatchResult(BatchOutcome.SKIPPED, 0);
      }
    }
  }

  /**
   * The running → completed compare-and-set, with the batch's keys added to the run's processed
   * keys, the batch to its completed batches and to the {@code completed} outcome counter (both in
   * the batch's shard, see {@link ShardedCounters}): CTEs of one statement, so one transaction and
   * one round trip. {@code done} returns the batch's backfill and slot seconds, nothing if the
   * batch was not running any more, in which case nothing is counted. Parameters: run, number, run,
   * shard, shard.
   */
  private static final String COMPLETE_CTES =
      "with done as ("
          + " update batches b set status = 'completed', finished_at = now(), error = null"
          + " from runs r where r.id = b.run_id"
          + " and b.run_id = ? and b.number = ? and b.status = 'running'"
          + " returning r.backfill, b.size, "
          + BatchMetrics.SLOT_SECONDS
          + " as slot_seconds),"
          + " keys as (insert into run_key_counts"
          + " (run_id, shard, processed_keys, completed_batches)"
          + " select ?, ?, size, 1 from done"
          + " on conflict (run_id, shard) do update"
          + " set processed_keys = run_key_counts.processed_keys + excluded.processed_keys,"
          + " completed_batches = run_key_counts.completed_batches + 1),"
          + " outcomes as (insert into batch_outcome_counters (backfill, outcome, shard, value)"
          + " select backfill, 'completed', ?, 1 from done"
          + " on conflict (backfill, outcome, shard) do update"
          + " set value = batch_outcome_counters.value + excluded.value)";

  /**
   * The update of {@link #claimNext}: takes the run's lowest pending batch into a chain if the run
   * is running, not stopping and its cap covers the lane. Parameters: chain head, run, run, lane.
   */
  private static final String CLAIM_NEXT =
      "update batches b set status = 'running', chain_head = ?, claim_token = null,"
          + " enqueued_at = now(), started_at = coalesce(b.started_at, now()),"
          + " attempts = b.attempts + 1"
          + " from runs r where r.id = b.run_id and b.run_id = ?"
          + " and b.number = (select p.number from batches p join runs q on q.id = p.run_id"
          + " where p.run_id = ? and p.status = 'pending' and q.status = 'running'"
          + " and q.stop_requested_at is null and ? <= q.max_parallel_batches"
          + " order by p.number limit 1 for update of p skip locked)";

  /** Sets the parameters of {@link #COMPLETE_CTES} from {@code first}; the next index. */
  private static int bindComplete(PreparedStatement statement, int first, long runId, int number)
      throws SQLException {
    int shard = ShardedCounters.shardOf(number);
    statement.setLong(first, runId);
    statement.setInt(first + 1, number);
    statement.setLong(first + 2, runId);
    statement.setInt(first + 3, shard);
    statement.setInt(first + 4, shard);
    return first + 5;
  }

  /** Sets the parameters of {@link #CLAIM_NEXT} from {@code first}; the next index. */
  private static int bindClaimNext(
      PreparedStatement statement, int first, long runId, int headNumber, int lane)
      throws SQLException {
    statement.setInt(first, headNumber);
    statement.setLong(first + 1, runId);
    statement.setLong(first + 2, runId);
    statement.setInt(first + 3, lane);
    return first + 4;
  }

  /**
   * The end of a record statement, which commits in the same round trip: from one row, so that the
   * select has a row to fail on when {@code done} is empty — the batch was not running any more —,
   * which {@code dripline_slot_lost} does with {@link #SLOT_LOST}: the transaction aborts, and the
   * COMMIT sent behind it does not run. Parameters: run, number.
   */
  private static final String SLOT_LOST_CHECK =
      ", case when d.backfill is null then dripline_slot_lost(?, ?) end as slot_lost"
          + " from (values (0)) one left join done d on true";

  /** Sets the parameters of {@link #SLOT_LOST_CHECK} from {@code first}. */
  private static void bindSlotLostCheck(
      PreparedStatement statement, int first, long runId, int number) throws SQLException {
    statement.setLong(first, runId);
    statement.setInt(first + 1, number);
  }

  /**
   * Records batch {@code number} completed ({@link #COMPLETE_CTES}) and commits, as one statement
   * in one round trip; fails with {@link #SLOT_LOST} if it was not running any more.
   */
  private static final String COMPLETE_AND_COMMIT =
      COMPLETE_CTES + " select d.backfill, d.slot_seconds" + SLOT_LOST_CHECK + "; commit";

  /** Runs {@link #COMPLETE_AND_COMMIT}. */
  private static BatchMetrics.Outcome complete(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(COMPLETE_AND_COMMIT)) {
      bindSlotLostCheck(update, bindComplete(update, 1, runId, number), runId, number);
      try (ResultSet rs = resultOf(update)) {
        rs.next();
        return BatchMetrics.Outcome.of(rs);
      }
    }
  }

  /**
   * The rows of {@code statement}, a query followed by a COMMIT ({@code executeQuery} does not take
   * a second statement).
   */
  private static ResultSet resultOf(PreparedStatement statement) throws SQLException {
    if (!statement.execute()) {
      throw new SQLException("the record statement gave no result set");
    }
    return statement.getResultSet();
  }

  /**
   * {@link #complete} and, only if it recorded the batch, {@link #claimNext} — one statement, so a
   * chained batch costs one round trip of bookkeeping (W2 in docs/benchmarks.md). The claim cannot
   * take the batch just completed: it was {@code running} in the statement's snapshot. Parameters:
   * run, number, run, shard, shard (the completion), chain head, run, run, lane (the claim). The
   * engine runs it as {@link #RECORD_AND_CLAIM_NEXT_AND_COMMIT}; public for the bench, whose W2
   * system B runs this statement on copies of these tables (and commits in a round trip of its
   * own).
   */
  public static final String RECORD_AND_CLAIM_NEXT =
      recordAndClaimNext(" from done d left join next n on true");

  /**
   * {@link #RECORD_AND_CLAIM_NEXT} with {@link #SLOT_LOST_CHECK} and COMMIT, one round trip.
   * Parameters: those of {@link #RECORD_AND_CLAIM_NEXT}, then run, number.
   */
  private static final String RECORD_AND_CLAIM_NEXT_AND_COMMIT =
      recordAndClaimNext(SLOT_LOST_CHECK + " left join next n on true; commit");

  private static String recordAndClaimNext(String end) {
    return COMPLETE_CTES
        + ", next as ("
        + CLAIM_NEXT
        + " and exists (select 1 from done)"
        + STARTED_COLUMNS
        + ") select d.backfill, d.slot_seconds, n.number, n.start_key, n.end_key, n.size, n.options"
        + end;
  }

  /** Runs {@link #RECORD_AND_CLAIM_NEXT_AND_COMMIT}. */
  private static Recorded completeAndClaimNext(
      Connection connection, long runId, int number, int headNumber, int lane) throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(RECORD_AND_CLAIM_NEXT_AND_COMMIT)) {
      int next = bindComplete(update, 1, runId, number);
      next = bindClaimNext(update, next, runId, headNumber, lane);
      bindSlotLostCheck(update, next, runId, number);
      try (ResultSet rs = resultOf(update)) {
        rs.next();
        BatchMetrics.Outcome completed = BatchMetrics.Outcome.of(rs);
        return new Recorded(completed, rs.getObject("number") == null ? null : started(rs));
      }
    }
  }

  /** Best effort: the error of the last attempt is what an operator sees while it retries. */
  private void recordAttemptError(long runId, int number, String error) {
    try {
      database.inTransaction(
          connection -> {
            try (PreparedStatement update =
                connection.prepareStatement(
                    "update batches set error = ?"
                        + " where run_id = ? and number = ? and status = 'running'")) {
              update.setString(1, error);
              update.setLong(2, runId);
              update.setInt(3, number);
              return update.executeUpdate();
            }
          });
    } catch (RuntimeException e) {
      LOG.warn("Could not record the error of batch {} of run {}", number, runId, e);
    }
  }
}
