package dev.dripline.activities.run;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TransactionalBackfillDefinition;
import dev.dripline.store.config.EngineConfig;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.DatabaseOutage;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at one batch, independent of Temporal's activity context so it can be called (and
 * tested) directly; {@link BatchActivitiesImpl} adds heartbeats around it.
 *
 * <p>One attempt may go on, in the same slot, with further pending batches of the run (a chain, see
 * {@link #process(BatchWork, BatchAttempt)}): per batch that costs one transaction and one
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
 * spec §2), rather than spending the batch's attempts on the outage. A statement retried after its
 * connection broke may have committed already; each retry is safe for that: the compare-and-sets
 * match no row a second time, and a chain first looks for the batch an earlier try may have taken
 * ({@code chain_head}), as a new attempt after a crash does.
 */
@Singleton
public class BatchExecution {
  private static final Logger LOG = LoggerFactory.getLogger(BatchExecution.class);

  /** Runs of the definition on one batch, within one attempt, that an outage may cost. */
  private static final int MAX_OUTAGE_RERUNS = 5;

  /** How long a chain waits for planning to add a batch when none is pending, and how often. */
  static final long PLAN_WAIT_MILLIS = 1_000;

  private static final long PLAN_POLL_MILLIS = 50;

  /** How often an attempt looks whether another attempt's live lease on its batch has run out. */
  private static final long HOLDER_POLL_MILLIS = 200;

  private final Database database;
  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;
  private final BatchMetrics metrics;
  private final Duration outageWait;
  private final Duration defaultLease;

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
    this.defaultLease = engine.batchHeartbeatTimeout();
  }

  /** What an attempt needs from the batch row it marked running. */
  private record Started(int number, KeyRange range, int size, String options) {}

  /** Columns of {@link Started}, from a statement over {@code batches b} and {@code runs r}. */
  private static final String STARTED_COLUMNS =
      " returning b.number, b.start_key, b.end_key, b.size, r.options::text as options";

  /** Processes the batch, without chaining, as an attempt of its own. */
  public BatchResult process(BatchWork work) {
    return process(work, BatchAttempt.standalone(defaultLease));
  }

  /**
   * Processes the head batch unless it was completed already or no longer holds a slot; then, for
   * as long as {@link BatchWork#chainMillis()} allows, goes on in the same slot with the run's
   * lowest pending batch, one at a time (a chain). A chained batch is taken only while the run is
   * running, not stopping, and its cap still covers this activity's lane and its slot holders, so
   * stop, pause and a lowered cap end a chain at its next batch, and the cap holds: the chain holds
   * one batch at a time in the slot the workflow counts for it.
   *
   * <p>Every batch the attempt takes is recorded with {@code attempt} as its holder and a lease the
   * caller renews ({@link #renewLease}); a batch held by another attempt whose lease is live is
   * waited for, never run alongside it (R5b).
   *
   * @param attempt who holds the batches, and whether it may go on (false once it was fenced:
   *     cancelled, timed out, or its lease not renewed)
   * @throws ApplicationFailure of type {@link DriplineFailure#BATCH_PERMANENT} (non-retryable) or
   *     {@link DriplineFailure#BATCH_FAILED} (retryable) when the definition fails on the head
   *     batch; a chained batch that fails is handed back in the result instead
   */
  public BatchResult process(BatchWork work, BatchAttempt attempt) {
    attempt.begin(work.runId());
    try {
      return processChain(work, attempt);
    } finally {
      attempt.end();
    }
  }

  private BatchResult processChain(BatchWork work, BatchAttempt attempt) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(work.chainMillis());
    BackfillDefinition definition = registry.require(work.backfill());
    BatchResult head = processHead(definition, work, attempt);
    if (work.chainMillis() <= 0 || work.lane() < 1 || head.outcome() == BatchOutcome.SKIPPED) {
      return head;
    }
    long runId = work.runId();
    int headNumber = work.batch().number();
    int chained = 0;
    long chainedKeys = 0;
    int outageReruns = 0;
    // A batch this chain held when an earlier attempt of this activity died: it holds the slot.
    Started next = resumeHeldOnceFree(runId, headNumber, attempt);
    if (next == null && mayGoOn(deadline, attempt)) {
      next = claimOrAwait(runId, headNumber, work.lane(), work.groupEnd(), deadline, attempt);
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
                attempt,
                connection ->
                    mayGoOn(deadline, attempt)
                        ? completeAndClaimNext(
                            connection,
                            runId,
                            batch.number(),
                            headNumber,
                            work.lane(),
                            work.groupEnd(),
                            attempt)
                        : new Recorded(complete(connection, runId, batch.number(), attempt), null));
      } catch (Exception e) {
        if (outageMayBeWaitedOut(e, attempt)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, batch.number(), e, attempt)) {
          // Whether the batch's record committed is unknown: go on with what this chain holds —
          // the same batch if it did not (run again), the next one if it did, nothing if it
          // claimed none. Still this attempt: the attempts count is not raised again.
          long sentAt = System.nanoTime();
          next =
              store(
                  connection -> resumeHeld(connection, runId, headNumber, false, attempt),
                  null,
                  attempt);
          if (next != null) {
            attempt.hold(next.number(), sentAt);
            attempt.unfence(sentAt);
          } else {
            attempt.release();
          }
          if (!attempt.mayContinue()) {
            break;
          }
          continue;
        }
        String error = attemptFailed(runId, batch.number(), e, attempt);
        // Its record may have committed unseen, with the claim of the next batch: that one goes
        // back to pending, or nobody would ever run it (F3 in docs/reliability.md).
        releaseHeld(runId, headNumber, batch.number(), attempt);
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
        attempt.release();
        break;
      }
      metrics.recordSlotTime(recorded.completed());
      chained++;
      chainedKeys += batch.size();
      next = recorded.next();
      if (next != null) {
        attempt.hold(next.number(), recorded.sentAtNanos());
      } else {
        attempt.release();
      }
      if (next == null && mayGoOn(deadline, attempt)) {
        next = claimOrAwait(runId, headNumber, work.lane(), work.groupEnd(), deadline, attempt);
      }
    }
    return new BatchResult(head.outcome(), head.size(), chained, chainedKeys, null, null, false);
  }

  /**
   * Whether a failure of the definition or its record may be an outage to wait out in the same
   * attempt: a lost connection, or a fence because PostgreSQL could not renew the lease.
   */
  private static boolean outageMayBeWaitedOut(Exception e, BatchAttempt attempt) {
    return DatabaseOutage.isConnectionFailure(e)
        || attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED;
  }

  /**
   * Renews the lease of the batch {@code attempt} holds, if any; counts for the attempt only if it
   * still holds that batch. Called by whoever keeps the attempt alive (a ticker), never by the
   * attempt's own thread.
   */
  public void renewLease(long runId, BatchAttempt attempt) {
    Integer number = attempt.held();
    if (number == null) {
      return;
    }
    long sentAt = System.nanoTime();
    int renewed = database.withConnection(connection -> renew(connection, runId, number, attempt));
    if (renewed == 1) {
      attempt.confirmed(number, sentAt);
    }
  }

  private static int renew(Connection connection, long runId, int number, BatchAttempt attempt)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches set lease_until = now() + ? * interval '1 millisecond'"
                + " where run_id = ? and number = ? and holder = ? and status = 'running'")) {
      update.setLong(1, attempt.lease().toMillis());
      update.setLong(2, runId);
      update.setInt(3, number);
      update.setString(4, attempt.holder());
      return update.executeUpdate();
    }
  }

  /**
   * The chain's next batch: the run's lowest pending one or, while planning still adds batches (the
   * run running, not stopping, its cap covering {@code lane}, its plan not done), the first one
   * planned within {@link #PLAN_WAIT_MILLIS}. A chain that ended for want of a pending batch would
   * cost the workflow a round trip to start another when the page arrives (W2 in
   * docs/benchmarks.md: the first pages are small, and chains outran them).
   */
  private Started claimOrAwait(
      long runId, int headNumber, int lane, Integer groupEnd, long deadline, BatchAttempt attempt) {
    // A group takes only its own batches: it has none to wait for.
    long waitUntil =
        groupEnd != null
            ? System.nanoTime()
            : Math.min(
                deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PLAN_WAIT_MILLIS));
    while (true) {
      long sentAt = System.nanoTime();
      Started next =
          store(
              connection -> claimNext(connection, runId, headNumber, lane, groupEnd, attempt),
              // The first try may have taken a batch (and counted its attempt) and lost the answer:
              // resume that one.
              connection -> {
                Started held = resumeHeld(connection, runId, headNumber, false, attempt);
                return held != null
                    ? held
                    : claimNext(connection, runId, headNumber, lane, groupEnd, attempt);
              },
              attempt);
      if (next != null) {
        attempt.hold(next.number(), sentAt);
        return next;
      }
      if (System.nanoTime() - waitUntil >= 0
          || !attempt.mayContinue()
          || !store(connection -> planningGoesOn(connection, runId, lane), null, attempt)) {
        return null;
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
  private record Recorded(BatchMetrics.Outcome completed, Started next, long sentAtNanos) {
    Recorded(BatchMetrics.Outcome completed, Started next) {
      this(completed, next, System.nanoTime());
    }
  }

  /** SQLSTATE of {@code dripline_slot_lost} (migration V10): the batch no longer held its slot. */
  static final String SLOT_LOST = "DL001";

  /** Whether the chain may take another batch: time left, and the attempt not fenced. */
  private static boolean mayGoOn(long deadline, BatchAttempt attempt) {
    return System.nanoTime() - deadline < 0 && attempt.mayContinue();
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
      BackfillDefinition definition,
      long runId,
      Started batch,
      BatchAttempt attempt,
      Database.Work<Recorded> record)
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
          // A fence cancels the definition's statement on this connection.
          attempt.statementConnection(connection);
          try {
            transactional.processBatch(context, batch.range(), connection);
          } finally {
            attempt.statementConnection(null);
          }
        }
        if (!attempt.mayContinue()) {
          // Fenced while the definition ran: another attempt may hold the batch soon.
          throw new InterruptedException("batch attempt fenced: " + attempt.fenced());
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
  private <T> T store(Database.Work<T> first, Database.Work<T> again, BatchAttempt attempt) {
    Database.Work<T> work = first;
    while (true) {
      try {
        return database.withConnection(work);
      } catch (RuntimeException e) {
        if (!DatabaseOutage.isConnectionFailure(e) || !awaitDatabase(null, null, e, attempt)) {
          throw e;
        }
        if (again != null) {
          work = again;
        }
      }
    }
  }

  private boolean awaitDatabase(
      Long runId, Integer number, Exception failure, BatchAttempt attempt) {
    LOG.warn(
        "Lost PostgreSQL{}: {}; waiting up to {} for it to answer",
        number == null ? "" : " in batch " + number + " of run " + runId,
        failure.toString(),
        outageWait);
    boolean back;
    attempt.awaitingDatabase(true);
    try {
      if (attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED) {
        Thread.interrupted(); // the fence's interrupt, which ended the definition, is handled
      }
      back = database.awaitAvailable(outageWait, attempt::mayAwaitDatabase);
    } finally {
      attempt.awaitingDatabase(false);
    }
    if (!back) {
      LOG.warn("PostgreSQL did not answer in time, or the attempt was cancelled; giving up");
    } else if (attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED) {
      reclaimLease(attempt);
    }
    return back;
  }

  /**
   * After an outage that kept a fenced attempt from renewing its lease: the attempt carries on if
   * the batch it holds is still its own (its lease renewed now), or if it holds none.
   */
  private void reclaimLease(BatchAttempt attempt) {
    Integer held = attempt.held();
    long sentAt = System.nanoTime();
    try {
      if (held == null
          || database.withConnection(
                  connection -> renew(connection, attempt.runId(), held, attempt))
              == 1) {
        if (held != null) {
          attempt.confirmed(held, sentAt);
        }
        attempt.unfence(sentAt);
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not renew the lease of {} after the outage: {}", attempt, e.toString());
    }
  }

  /** Best effort: puts back to pending any batch this chain holds other than {@code except}. */
  private void releaseHeld(long runId, int headNumber, int except, BatchAttempt attempt) {
    attempt.release();
    try {
      int released =
          database.withConnection(
              connection -> {
                try (PreparedStatement update =
                    connection.prepareStatement(
                        "update batches set status = 'pending', claim_token = null,"
                            + " chain_head = null, holder = null, lease_until = null"
                            + " where run_id = ? and chain_head = ? and status = 'running'"
                            + " and number <> ? and holder = ?")) {
                  update.setLong(1, runId);
                  update.setInt(2, headNumber);
                  update.setInt(3, except);
                  update.setString(4, attempt.holder());
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
  private String attemptFailed(long runId, int number, Exception e, BatchAttempt attempt) {
    if (!attempt.mayContinue()) {
      Thread.interrupted(); // the fence's interrupt did its work; the records below must not fail
    } else if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String error = ErrorText.of(e);
    if (!attempt.mayContinue()) {
      error = "attempt stopped (" + attempt.fenced() + "): " + error;
    }
    recordAttemptError(runId, number, error, attempt);
    return error;
  }

  /** The head batch: the one the workflow claimed for this activity. */
  private BatchResult processHead(
      BackfillDefinition definition, BatchWork work, BatchAttempt attempt) {
    long runId = work.runId();
    int number = work.batch().number();
    Started started = takeHead(runId, number, attempt);
    if (started == null) {
      return store(connection -> notStarted(connection, runId, number), null, attempt);
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
                attempt,
                connection -> new Recorded(complete(connection, runId, number, attempt), null));
      } catch (Exception e) {
        if (outageMayBeWaitedOut(e, attempt)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, number, e, attempt)) {
          long sentAt = System.nanoTime();
          if (store(connection -> renew(connection, runId, number, attempt), null, attempt) == 1) {
            // Its record did not commit and the batch is still its own: run it again, in the same
            // attempt.
            attempt.confirmed(number, sentAt);
            attempt.unfence(sentAt);
            if (attempt.mayContinue()) {
              continue;
            }
          }
          // Its record committed unseen, or it lost its slot: whoever completed it counted it.
          attempt.release();
          return store(connection -> notStarted(connection, runId, number), null, attempt);
        }
        String error = attemptFailed(runId, number, e, attempt);
        attempt.release();
        if (e instanceof PermanentBackfillException) {
          throw ApplicationFailure.newNonRetryableFailureWithCause(
              error, DriplineFailure.BATCH_PERMANENT.name(), e);
        }
        throw ApplicationFailure.newFailureWithCause(error, DriplineFailure.BATCH_FAILED.name(), e);
      }
      attempt.release();
      if (recorded.completed() != null) {
        metrics.recordSlotTime(recorded.completed());
        return new BatchResult(BatchOutcome.COMPLETED, started.size());
      }
      // Lost its slot while running (run recovered or batch failed meanwhile): its keys are not
      // counted here; whoever holds the batch now will count them.
      return store(connection -> notStarted(connection, runId, number), null, attempt);
    }
  }

  /**
   * Marks the head batch running with {@code attempt} as its holder: from {@code enqueued}, or from
   * {@code running} once the lease of the attempt that held it has run out. While another attempt
   * holds it with a live lease — an attempt Temporal gave up on that has not stopped yet — this one
   * waits rather than run the batch alongside it. Null when the batch holds no slot (any more).
   */
  private Started takeHead(long runId, int number, BatchAttempt attempt) {
    while (true) {
      long sentAt = System.nanoTime();
      // Single statements in autocommit: one round trip each, no row held across round trips.
      Started started =
          store(connection -> markRunning(connection, runId, number, attempt), null, attempt);
      if (started != null) {
        attempt.hold(number, sentAt);
        return started;
      }
      if (!attempt.mayContinue()
          || !store(
              connection ->
                  RunSlots.heldLive(
                      connection, runId, RunSlots.Held.BATCH, number, attempt.holder()),
              null,
              attempt)
          || !pause(HOLDER_POLL_MILLIS)) {
        return null;
      }
      attempt.waitedForHolder();
    }
  }

  /** Sleeps; false if interrupted (the attempt was fenced). */
  private static boolean pause(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** A running batch is free to take over once its holder's lease has run out. */
  private static final String LEASE_RAN_OUT = "coalesce(b.lease_until, '-infinity') < now()";

  private static Started markRunning(
      Connection connection, long runId, int number, BatchAttempt attempt) throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set status = 'running', attempts = b.attempts + 1,"
                + " started_at = coalesce(b.started_at, now()), holder = ?,"
                + " lease_until = now() + ? * interval '1 millisecond'"
                + " from runs r where r.id = b.run_id and b.run_id = ? and b.number = ?"
                + " and (b.status = 'enqueued' or (b.status = 'running' and (b.holder = ? or "
                + LEASE_RAN_OUT
                + ")))"
                + STARTED_COLUMNS)) {
      update.setString(1, attempt.holder());
      update.setLong(2, attempt.lease().toMillis());
      update.setLong(3, runId);
      update.setInt(4, number);
      update.setString(5, attempt.holder());
      return started(update);
    }
  }

  /**
   * The batch an earlier attempt of this activity held in its chain when it died, once that
   * attempt's lease has run out (waiting while it is live); null if there is none.
   */
  private Started resumeHeldOnceFree(long runId, int headNumber, BatchAttempt attempt) {
    while (true) {
      long sentAt = System.nanoTime();
      Started held =
          store(
              connection -> resumeHeld(connection, runId, headNumber, true, attempt),
              null,
              attempt);
      if (held != null) {
        attempt.hold(held.number(), sentAt);
        return held;
      }
      if (!attempt.mayContinue()
          || !store(
              connection ->
                  RunSlots.heldLive(
                      connection, runId, RunSlots.Held.CHAIN, headNumber, attempt.holder()),
              null,
              attempt)
          || !pause(HOLDER_POLL_MILLIS)) {
        return null;
      }
      attempt.waitedForHolder();
    }
  }

  /**
   * The chained batch this chain holds; or null. {@code newAttempt}: an earlier attempt of this
   * activity held it (and died), so this is a new attempt at the batch and is counted; false when
   * this same attempt resumes it after losing PostgreSQL, which is not a new attempt (as for the
   * head batch, which an outage reruns in the same attempt).
   */
  private static Started resumeHeld(
      Connection connection, long runId, int headNumber, boolean newAttempt, BatchAttempt attempt)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set attempts = b.attempts + "
                + (newAttempt ? 1 : 0)
                + ", holder = ?, lease_until = now() + ? * interval '1 millisecond'"
                + " from runs r where r.id = b.run_id"
                + " and b.run_id = ? and b.chain_head = ? and b.status = 'running'"
                + (newAttempt
                    ? " and (b.holder = ? or " + LEASE_RAN_OUT + ")"
                    : " and b.holder = ?")
                + STARTED_COLUMNS)) {
      update.setString(1, attempt.holder());
      update.setLong(2, attempt.lease().toMillis());
      update.setLong(3, runId);
      update.setInt(4, headNumber);
      update.setString(5, attempt.holder());
      return started(update);
    }
  }

  /**
   * Takes the run's lowest pending batch into this chain (pending → running in one step), if the
   * run is running, not stopping, its cap covers {@code lane} and its slot holders are fewer than
   * its cap; null otherwise. It adds a slot holder, so it counts them under the run row's lock, as
   * every claim that adds one does (R5b). SKIP LOCKED: two chains, or a chain and the workflow's
   * claim, never take the same batch.
   */
  private static Started claimNext(
      Connection connection,
      long runId,
      int headNumber,
      int lane,
      Integer groupEnd,
      BatchAttempt attempt)
      throws SQLException {
    connection.setAutoCommit(false);
    try {
      Started next = null;
      if (RunSlots.lockRun(connection, runId)) {
        try (PreparedStatement update = connection.prepareStatement(CLAIM_NEXT + STARTED_COLUMNS)) {
          bindClaimNext(update, 1, runId, headNumber, lane, groupEnd, attempt, 1);
          next = started(update);
        }
      }
      connection.commit();
      return next;
    } catch (SQLException | RuntimeException e) {
      Database.rollbackQuietly(connection, e);
      throw e;
    } finally {
      Database.resetAutoCommit(connection, true);
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
   * batch was not running any more under this holder, in which case nothing is counted. Parameters:
   * run, number, holder, run, shard, shard.
   */
  private static final String COMPLETE_CTES =
      "with done as ("
          + " update batches b set status = 'completed', finished_at = now(), error = null,"
          + " lease_until = null"
          + " from runs r where r.id = b.run_id"
          + " and b.run_id = ? and b.number = ? and b.status = 'running' and b.holder = ?"
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
   * is running, not stopping, its cap covers the lane, and its slot holders (in the statement's
   * snapshot) leave room: at most the cap less the slack — 1 for a claim that adds a holder (made
   * under the run row's lock), 0 for one that replaces the batch completing in the same statement,
   * which the snapshot still counts. A group takes only batches numbered from its head to its last.
   * Parameters: chain head, holder, lease millis, run, run, lane, group start, group end, slack.
   */
  private static final String CLAIM_NEXT =
      "update batches b set status = 'running', chain_head = ?, claim_token = null, holder = ?,"
          + " lease_until = now() + ? * interval '1 millisecond',"
          + " enqueued_at = now(), started_at = coalesce(b.started_at, now()),"
          + " attempts = b.attempts + 1"
          + " from runs r where r.id = b.run_id and b.run_id = ?"
          + " and b.number = (select p.number from batches p join runs q on q.id = p.run_id"
          + " where p.run_id = ? and p.status = 'pending' and q.status = 'running'"
          + " and q.stop_requested_at is null and ? <= q.max_parallel_batches"
          + " and p.number between ? and ?"
          + " and (select count(*) from batches h where h.run_id = q.id"
          + " and h.status in ('enqueued', 'running')) <= q.max_parallel_batches - ?"
          + " order by p.number limit 1 for update of p skip locked)";

  /** Sets the parameters of {@link #COMPLETE_CTES} from {@code first}; the next index. */
  private static int bindComplete(
      PreparedStatement statement, int first, long runId, int number, String holder)
      throws SQLException {
    int shard = ShardedCounters.shardOf(number);
    statement.setLong(first, runId);
    statement.setInt(first + 1, number);
    statement.setString(first + 2, holder);
    statement.setLong(first + 3, runId);
    statement.setInt(first + 4, shard);
    statement.setInt(first + 5, shard);
    return first + 6;
  }

  /** Sets the parameters of {@link #CLAIM_NEXT} from {@code first}; the next index. */
  private static int bindClaimNext(
      PreparedStatement statement,
      int first,
      long runId,
      int headNumber,
      int lane,
      Integer groupEnd,
      BatchAttempt attempt,
      int slack)
      throws SQLException {
    statement.setInt(first, headNumber);
    statement.setString(first + 1, attempt.holder());
    statement.setLong(first + 2, attempt.lease().toMillis());
    statement.setLong(first + 3, runId);
    statement.setLong(first + 4, runId);
    statement.setInt(first + 5, lane);
    // A group's batches follow its head; a chain takes any pending batch.
    statement.setInt(first + 6, groupEnd == null ? 0 : headNumber);
    statement.setInt(first + 7, groupEnd == null ? Integer.MAX_VALUE : groupEnd);
    statement.setInt(first + 8, slack);
    return first + 9;
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
  private static BatchMetrics.Outcome complete(
      Connection connection, long runId, int number, BatchAttempt attempt) throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(COMPLETE_AND_COMMIT)) {
      bindSlotLostCheck(
          update, bindComplete(update, 1, runId, number, attempt.holder()), runId, number);
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
   * take the batch just completed: it was {@code running} in the statement's snapshot; it replaces
   * that slot holder, so it needs no lock. Parameters: run, number, holder, run, shard, shard (the
   * completion), chain head, holder, lease millis, run, run, lane, group start, group end, slack 0
   * (the claim). The engine runs it as {@link #RECORD_AND_CLAIM_NEXT_AND_COMMIT}; public for the
   * bench, whose W2 system B runs this statement on copies of these tables (and commits in a round
   * trip of its own).
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
      Connection connection,
      long runId,
      int number,
      int headNumber,
      int lane,
      Integer groupEnd,
      BatchAttempt attempt)
      throws SQLException {
    try (PreparedStatement update = connection.prepareStatement(RECORD_AND_CLAIM_NEXT_AND_COMMIT)) {
      int next = bindComplete(update, 1, runId, number, attempt.holder());
      next = bindClaimNext(update, next, runId, headNumber, lane, groupEnd, attempt, 0);
      long sentAt = System.nanoTime();
      bindSlotLostCheck(update, next, runId, number);
      try (ResultSet rs = resultOf(update)) {
        rs.next();
        BatchMetrics.Outcome completed = BatchMetrics.Outcome.of(rs);
        return new Recorded(completed, rs.getObject("number") == null ? null : started(rs), sentAt);
      }
    }
  }

  /**
   * Best effort: the error of the last attempt is what an operator sees while it retries. The
   * attempt is over, so its lease ends with it: the next attempt need not wait for it to run out.
   */
  private void recordAttemptError(long runId, int number, String error, BatchAttempt attempt) {
    try {
      database.inTransaction(
          connection -> {
            try (PreparedStatement update =
                connection.prepareStatement(
                    "update batches set error = ?, lease_until = now() where run_id = ?"
                        + " and number = ? and status = 'running' and holder = ?")) {
              update.setString(1, error);
              update.setLong(2, runId);
              update.setInt(3, number);
              update.setString(4, attempt.holder());
              return update.executeUpdate();
            }
          });
    } catch (RuntimeException e) {
      LOG.warn("Could not record the error of batch {} of run {}", number, runId, e);
    }
  }
}
