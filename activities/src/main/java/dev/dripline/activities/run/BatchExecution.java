package dev.dripline.activities.run;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.config.EngineConfig;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.DatabaseOutage;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchDone;
import dev.dripline.store.run.BatchProgress;
import dev.dripline.store.run.BatchStart;
import dev.dripline.store.run.BatchStore;
import dev.dripline.store.run.ChainStep;
import dev.dripline.store.run.RunStore;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchPolicy;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.DriplineFailure;
import io.micronaut.data.connection.exceptions.ConnectionException;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * transition. Both counters are sharded ({@link ShardedCounters}): completions of one run do not
 * queue on one row.
 *
 * <p>PostgreSQL outages: an attempt that loses its connection ({@link DatabaseOutage}) — in its own
 * statements or in the definition's — waits for PostgreSQL to answer again (heartbeating all the
 * while, up to {@code database-outage-wait}) and carries on with the batch it holds, running the
 * definition on it again if its record had not committed (processing a batch twice is harmless,
 * spec §2), rather than spending the batch's attempts on the outage. A statement retried after its
 * connection broke may have committed already; each retry is safe for that: the compare-and-sets
 * match no row a second time, and a chain first looks for the batch an earlier try may have taken
 * ({@code chain_head}), as a new attempt after a crash does.
 *
 * <p>Its statements are {@link BatchStore}'s and {@link RunStore}'s; a lost connection reaches this
 * class as a runtime exception, which {@link #lostConnection} tells from the batch's own failures.
 */
@Singleton
public class BatchExecution {
  private static final Logger LOG = LoggerFactory.getLogger(BatchExecution.class);

  /** Runs of the definition on one batch, within one attempt, that an outage may cost. */
  private static final int MAX_OUTAGE_RERUNS = 5;

  /**
   * Records of one batch, within one attempt, that PostgreSQL may roll back as a deadlock's victim
   * or a serialization failure ({@link RecordConflict}) before the attempt counts as failed.
   */
  private static final int MAX_CONFLICT_RERUNS = 5;

  /** How long a chain waits for planning to add a batch when none is pending, and how often. */
  static final long PLAN_WAIT_MILLIS = 1_000;

  private static final long PLAN_POLL_MILLIS = 50;

  /** How often an attempt looks whether another attempt's live lease on its batch has run out. */
  private static final long HOLDER_POLL_MILLIS = 200;

  private final Database database;
  private final DataTransactions transactions;
  private final BatchStore batches;
  private final RunStore runs;
  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;
  private final BatchMetrics metrics;
  private final Duration outageWait;
  private final Duration defaultLease;
  private final BatchPolicy policy;
  private final LaneRest pace;

  public BatchExecution(
      Database database,
      DataTransactions transactions,
      BatchStore batches,
      RunStore runs,
      BackfillRegistry registry,
      RunOptionsReader optionsReader,
      BatchMetrics metrics,
      EngineConfig engine,
      LaneRest pace) {
    this.database = database;
    this.transactions = transactions;
    this.batches = batches;
    this.runs = runs;
    this.registry = registry;
    this.optionsReader = optionsReader;
    this.metrics = metrics;
    this.outageWait = engine.databaseOutageWait();
    this.defaultLease = engine.batchHeartbeatTimeout();
    this.policy = engine.batchPolicy();
    this.pace = pace;
  }

  /** What an attempt needs from the batch row it marked running. */
  private record Started(int number, KeySpan range, int size, String options, String pool) {
    /** The batch a statement marked running; null if none. */
    static Started of(BatchStart start) {
      return start == null
          ? null
          : new Started(
              start.number(),
              new KeySpan(start.startKey(), start.endKey()),
              start.size(),
              start.options(),
              start.pool());
    }
  }

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
   * <p>A paced run ({@link LaneRest}) rests after each batch this attempt completes, before the
   * chain takes its next batch or, after the last, before the attempt returns (so the workflow's
   * next batch in this slot starts after the rest too); a paced chain claims its next batch only
   * after the rest, so a stop, pause or hold that comes meanwhile starts no batch ({@link #rest}).
   *
   * @param attempt who holds the batches, and whether it may go on (false once it was fenced:
   *     cancelled, timed out, or its lease not renewed)
   * @throws ApplicationFailure of type {@link DriplineFailure#BATCH_PERMANENT} (non-retryable) or
   *     {@link DriplineFailure#BATCH_FAILED} (retryable; not on its last attempt) when the
   *     definition fails on the head batch; a chained batch that fails is handed back in the result
   *     instead
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
    KeyedBackfill definition = registry.require(work.backfill());
    long runId = work.runId();
    double niceRatio = store(() -> pace.niceRatio(runId), null, attempt);
    Ran ran = processHead(definition, work, attempt);
    BatchResult head = ran.result();
    boolean rested = rest(runId, niceRatio, ran.nanos(), attempt);
    if (work.chainMillis() <= 0 || work.lane() < 1 || head.outcome() == BatchOutcome.SKIPPED) {
      return head;
    }
    int headNumber = work.batch().number();
    int chained = 0;
    long chainedKeys = 0;
    int outageReruns = 0;
    int conflictReruns = 0;
    // A batch this chain held when an earlier attempt of this activity died: it holds the slot.
    Started next = resumeHeldOnceFree(runId, headNumber, attempt);
    if (next == null && rested && mayGoOn(deadline, attempt)) {
      next = claimOrAwait(runId, headNumber, work.lane(), deadline, attempt);
    }
    while (next != null) {
      if (!attempt.mayContinue()) {
        // Fenced while the round trip that claimed or resumed the batch was in flight: another
        // attempt may take it over, so this one never starts it. It goes back to pending rather
        // than wait for a retry to resume it: a fence before the deadline may still see this
        // result accepted, and then no retry comes. The fence's interrupt must not fail the
        // release.
        Thread.interrupted();
        releaseHeld(runId, headNumber, NO_BATCH, attempt);
        break;
      }
      Started batch = next;
      long batchStartedAt = System.nanoTime();
      // The completion and the next claim are one statement and commit together: one commit per
      // chained batch (with a transactional definition, the batch's own writes too). A paced chain
      // claims its next batch only after its rest.
      Recorded recorded;
      try {
        recorded =
            runAndRecord(
                definition,
                runId,
                batch,
                attempt,
                transaction ->
                    niceRatio == 0 && mayGoOn(deadline, attempt)
                        ? completeAndClaimNext(
                            transaction, runId, batch.number(), headNumber, work.lane(), attempt)
                        : new Recorded(
                            complete(transaction, runId, batch.number(), attempt), null));
      } catch (Exception thrown) {
        if (thrown instanceof RecordConflict conflict
            && conflictReruns++ < MAX_CONFLICT_RERUNS
            && attempt.mayContinue()) {
          // Nothing of the batch was recorded and it is still this chain's: run it again.
          logRerun(runId, batch.number(), conflict);
          next = batch;
          continue;
        }
        Exception e = RecordConflict.unwrap(thrown);
        if (outageMayBeWaitedOut(e, attempt)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, batch.number(), e, attempt)) {
          // Whether the batch's record committed is unknown: go on with what this chain holds —
          // the same batch if it did not (run again), the next one if it did, nothing if it
          // claimed none. Still this attempt: the attempts count is not raised again.
          long sentAt = System.nanoTime();
          next = store(() -> resumeHeld(runId, headNumber, false, attempt), null, attempt);
          if (next != null) {
            attempt.hold(next.number(), sentAt);
            attempt.unfence(sentAt);
          } else {
            attempt.release();
          }
          continue;
        }
        Failed failed = attemptFailed(runId, batch.number(), e, attempt);
        // Its record may have committed unseen, with the claim of the next batch: that one goes
        // back to pending, or nobody would ever run it (F3 in docs/reliability.md).
        releaseHeld(runId, headNumber, batch.number(), attempt);
        return new BatchResult(
            head.outcome(),
            head.size(),
            chained,
            chainedKeys,
            new BatchRef(
                batch.number(),
                batch.range().startKey().toString(),
                batch.range().endKey().toString(),
                batch.size()),
            failed.error(),
            e instanceof PermanentBackfillException || policy.exhaustedBy(failed.count()));
      }
      if (recorded.completed() == null) {
        // Lost its slot meanwhile (the run's slots were recovered): whoever holds it counts it.
        attempt.release();
        break;
      }
      metrics.recordSlotTime(recorded.completed());
      conflictReruns = 0;
      chained++;
      chainedKeys += batch.size();
      next = recorded.next();
      if (next != null) {
        attempt.hold(next.number(), recorded.sentAtNanos());
      } else {
        attempt.release();
      }
      if (next == null
          && rest(runId, niceRatio, System.nanoTime() - batchStartedAt, attempt)
          && mayGoOn(deadline, attempt)) {
        next = claimOrAwait(runId, headNumber, work.lane(), deadline, attempt);
      }
    }
    return new BatchResult(head.outcome(), head.size(), chained, chainedKeys, null, null, false);
  }

  /**
   * Whether a failure of the definition or its record may be an outage to wait out in the same
   * attempt: a lost connection, or a fence because PostgreSQL could not renew the lease.
   */
  private static boolean outageMayBeWaitedOut(Exception e, BatchAttempt attempt) {
    return lostConnection(e) || attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED;
  }

  /**
   * Whether {@code failure} says PostgreSQL could not be reached ({@link DatabaseOutage}), or is
   * Micronaut Data's failure to reset a connection the pool had already closed as broken: after a
   * repository call lost its connection, that reset fails ("Connection is closed", no SQLState) and
   * its failure replaces the call's own. The pool closes a connection as broken only for a
   * connection failure (its SQLState, or a timeout), so this one is an outage too.
   */
  static boolean lostConnection(Throwable failure) {
    if (DatabaseOutage.isConnectionFailure(failure)) {
      return true;
    }
    for (Throwable suppressed : failure.getSuppressed()) {
      if (DatabaseOutage.isConnectionFailure(suppressed)) {
        return true;
      }
    }
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (cause instanceof ConnectionException
          && cause.getCause() instanceof SQLException closed
          && closed.getSQLState() == null
          && "Connection is closed".equals(closed.getMessage())) {
        return true;
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return false;
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
    int renewed = renew(runId, number, attempt);
    if (renewed == 1) {
      attempt.confirmed(number, sentAt);
    }
  }

  /** {@link BatchStore#renewLease}, a single statement in auto-commit. */
  private int renew(long runId, int number, BatchAttempt attempt) {
    return batches.renewLease(runId, number, attempt.holder(), attempt.lease().toMillis());
  }

  /**
   * The chain's next batch: the run's lowest pending one or, while planning still adds batches (the
   * run running, not stopping, its cap covering {@code lane}, its plan not done), the first one
   * planned within {@link #PLAN_WAIT_MILLIS}. A chain that ended for want of a pending batch would
   * cost the workflow a round trip to start another when the page arrives (W2 in
   * docs/benchmarks.md: the first pages are small, and chains outran them).
   */
  private Started claimOrAwait(
      long runId, int headNumber, int lane, long deadline, BatchAttempt attempt) {
    long waitUntil =
        Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PLAN_WAIT_MILLIS));
    while (true) {
      long sentAt = System.nanoTime();
      Started next =
          store(
              () -> claimNext(runId, headNumber, lane, attempt),
              // The first try may have taken a batch (and counted its attempt) and lost the answer:
              // resume that one.
              () -> {
                Started held = resumeHeld(runId, headNumber, false, attempt);
                return held != null ? held : claimNext(runId, headNumber, lane, attempt);
              },
              attempt);
      if (next != null) {
        attempt.hold(next.number(), sentAt);
        return next;
      }
      if (System.nanoTime() - waitUntil >= 0
          || !attempt.mayContinue()
          || !store(() -> runs.planningGoesOn(runId, lane) > 0, null, attempt)) {
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
   * Runs the definition on {@code batch}, then {@code record}, the statement that records it — or,
   * when the batch no longer held its slot, fails with {@link #SLOT_LOST} and records nothing
   * ({@link Recorded#completed()} null). Any other definition's batch is recorded by that one
   * statement in auto-commit: one round trip. A {@linkplain KeyedBackfill#transactional()
   * transactional} one (a {@link dev.dripline.spi.TransactionalBackfillDefinition} or a table
   * definition) works inside a transaction ({@link DataTransactions}) that the record joins, so its
   * writes commit with the record or not at all: its own statements, the record and the COMMIT (W2
   * in docs/benchmarks.md).
   *
   * @throws Exception what the definition (or, in its transaction, the recording) threw; nothing of
   *     the batch was recorded
   */
  private Recorded runAndRecord(
      KeyedBackfill definition, long runId, Started batch, BatchAttempt attempt, Recording record)
      throws Exception {
    BackfillContext context =
        optionsReader.context(runId, definition.definition(), batch.options(), batch.pool());
    // What failed inside the transaction: ending a transaction whose connection broke fails too
    // ("Connection is closed", no SQLState), and that failure replaces the first one, which says
    // what happened (e.g. a lost connection, which is an outage to wait out).
    RuntimeException[] inside = new RuntimeException[1];
    boolean[] recording = new boolean[1];
    try {
      if (!definition.transactional()) {
        definition.processBatch(context, batch.range());
        requireNotFenced(attempt);
        recording[0] = true;
        return record.run(null);
      }
      return transactions.inTransaction(
          connection -> {
            // A fence cancels the definition's statement on this connection.
            attempt.statementConnection(connection);
            try {
              definition.processBatch(context, batch.range(), connection);
              requireNotFenced(attempt);
            } catch (Exception e) {
              inside[0] = new DefinitionFailed(e);
              throw inside[0];
            } finally {
              attempt.statementConnection(null);
            }
            recording[0] = true;
            try {
              return record.run(connection);
            } catch (RuntimeException e) {
              inside[0] = e;
              throw e;
            }
          });
    } catch (RuntimeException e) {
      RuntimeException failure = e;
      if (inside[0] != null && inside[0] != e) {
        failure = inside[0];
        failure.addSuppressed(e);
      }
      if (failure instanceof DefinitionFailed definitionFailed) {
        throw definitionFailed.failure();
      }
      if (slotLost(failure)) {
        return new Recorded(null, null);
      }
      if (recording[0] && RecordConflict.rolledBack(failure)) {
        throw new RecordConflict(failure);
      }
      throw failure;
    }
  }

  /**
   * The record of a batch that PostgreSQL rolled back whole, as a deadlock's victim (SQLSTATE
   * 40P01) or a serialization failure (40001), which say to try again: nothing of the batch was
   * recorded (a transactional definition's writes rolled back with it) and the batch is still the
   * attempt's, which runs it again rather than count a failed attempt. A safety net: the engine's
   * statements take their locks in one order (migration V25), and the counters' upsert that
   * deadlocked now and then ({@code run_key_counts}, W1 in docs/benchmarks.md) is a plain UPDATE
   * now; a transactional definition's own writes may still deadlock with others.
   */
  private static final class RecordConflict extends RuntimeException {
    RecordConflict(RuntimeException failure) {
      super(failure);
    }

    /** What the record threw; {@code e} itself if it is no record conflict. */
    static Exception unwrap(Exception e) {
      return e instanceof RecordConflict conflict ? (Exception) conflict.getCause() : e;
    }

    static boolean rolledBack(Throwable failure) {
      Throwable cause = failure;
      for (int depth = 0; cause != null && depth < 32; depth++) {
        if (cause instanceof SQLException sql
            && ("40P01".equals(sql.getSQLState()) || "40001".equals(sql.getSQLState()))) {
          return true;
        }
        cause = cause.getCause() == cause ? null : cause.getCause();
      }
      return false;
    }
  }

  private static void logRerun(long runId, int number, RecordConflict conflict) {
    LOG.info(
        "Run {}: the record of batch {} was rolled back ({}); running it again in the same attempt",
        runId,
        number,
        ErrorText.of(conflict.getCause()));
  }

  /** A batch's record statement. */
  @FunctionalInterface
  private interface Recording {
    /**
     * Records the batch: in auto-commit when {@code transaction} is null, else on it and with its
     * COMMIT in the same round trip.
     */
    Recorded run(Connection transaction) throws SQLException;
  }

  /**
   * Carries what a transactional definition threw (or the fence after it) out of its transaction,
   * which rolls back, unchanged: its type decides whether the batch fails for good.
   */
  private static final class DefinitionFailed extends RuntimeException {
    DefinitionFailed(Exception failure) {
      super(failure);
    }

    Exception failure() {
      return (Exception) getCause();
    }
  }

  /** Fenced while the definition ran: another attempt may hold the batch soon. */
  private static void requireNotFenced(BatchAttempt attempt) throws InterruptedException {
    if (!attempt.mayContinue()) {
      throw new InterruptedException("batch attempt fenced: " + attempt.fenced());
    }
  }

  /** Whether {@code failure} is {@code dripline_slot_lost}'s ({@link #SLOT_LOST}). */
  private static boolean slotLost(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof SQLException sql && SLOT_LOST.equals(sql.getSQLState())) {
        return true;
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    return false;
  }

  /**
   * Runs a statement of the engine's own (a repository call, in auto-commit unless it is given a
   * transaction); when PostgreSQL cannot be reached, waits until it answers and tries again, with
   * {@code again} if given (for a statement whose first try may have committed unseen).
   */
  private <T> T store(Supplier<T> first, Supplier<T> again, BatchAttempt attempt) {
    Supplier<T> work = first;
    while (true) {
      try {
        return work.get();
      } catch (RuntimeException e) {
        if (!lostConnection(e) || !awaitDatabase(null, null, e, attempt)) {
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
      if (held == null || renew(attempt.runId(), held, attempt) == 1) {
        if (held != null) {
          attempt.confirmed(held, sentAt);
        }
        attempt.unfence(sentAt);
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not renew the lease of {} after the outage: {}", attempt, e.toString());
    }
  }

  /** No batch's number (batches are numbered from 1): {@link #releaseHeld} keeps none. */
  private static final int NO_BATCH = 0;

  /** Best effort: puts back to pending any batch this chain holds other than {@code except}. */
  private void releaseHeld(long runId, int headNumber, int except, BatchAttempt attempt) {
    attempt.release();
    try {
      int released = batches.releaseHeldByChain(runId, headNumber, except, attempt.holder());
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

  /**
   * A failed attempt: its error's text, and the batch's failed attempts so far (0 if the failure
   * could not be recorded).
   */
  private record Failed(String error, int count) {}

  /**
   * Records a failed attempt's error on its batch and counts it among its failed attempts, unless
   * the attempt was interrupted without a fence of ours — its worker is shutting down (a deploy),
   * which is no more the definition's failure than a killed worker is — or fenced for a reason
   * other than its deadline.
   */
  private Failed attemptFailed(long runId, int number, Exception e, BatchAttempt attempt) {
    boolean workerStopping = attempt.mayContinue() && interrupted(e);
    if (!attempt.mayContinue() || workerStopping) {
      // The interrupt did its work; the records below must not fail on it.
      Thread.interrupted();
    } else if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String error = ErrorText.of(e);
    if (!attempt.mayContinue()) {
      error = "attempt stopped (" + attempt.fenced() + "): " + error;
    } else if (workerStopping) {
      error = "attempt interrupted (worker stopping): " + error;
    }
    // A fence counts only for the definition's own overrun (its deadline); a heartbeat Temporal
    // rejected (the attempt was given up: cut off, or cancelled) or a lease PostgreSQL could not
    // renew is no failure of the definition's.
    boolean counts =
        attempt.mayContinue() ? !workerStopping : attempt.fenced() == BatchAttempt.Fence.TIMED_OUT;
    // The error is on the batch only until it completes: the log keeps it.
    LOG.info(
        "Run {}: attempt {} at batch {} failed{}: {}",
        runId,
        attempt.holder(),
        number,
        counts ? "" : " (not counted)",
        error);
    int count = recordAttemptFailed(runId, number, error, counts, attempt);
    if (workerStopping) {
      Thread.currentThread().interrupt();
    }
    return new Failed(error, count);
  }

  /** Whether the thread was interrupted, or {@code e} says an interrupt ended it. */
  private static boolean interrupted(Throwable e) {
    if (Thread.currentThread().isInterrupted()) {
      return true;
    }
    Throwable cause = e;
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (cause instanceof InterruptedException
          || cause instanceof java.nio.channels.ClosedByInterruptException) {
        return true;
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return false;
  }

  /**
   * What processing the head batch came to, and how long its run and record took when it completed
   * it ({@code nanos}, else 0: nothing to rest after).
   */
  private record Ran(BatchResult result, long nanos) {
    static Ran without(BatchResult result) {
      return new Ran(result, 0);
    }
  }

  /** The head batch: the one the workflow claimed for this activity. */
  private Ran processHead(KeyedBackfill definition, BatchWork work, BatchAttempt attempt) {
    long runId = work.runId();
    int number = work.batch().number();
    if (attempt.retry()) {
      // An attempt that failed the batch's last allowed time may have reported it too late: its
      // start-to-close timeout passed first, and Temporal, which retries without limit, tried
      // again. The batch fails now, as that report would have made it.
      Optional<String> exhausted =
          store(() -> batches.exhaustedError(runId, number, policy.maxAttempts()), null, attempt);
      if (exhausted.isPresent()) {
        throw ApplicationFailure.newNonRetryableFailure(
            exhausted.get(), DriplineFailure.BATCH_FAILED.name());
      }
    }
    Started started = takeHead(runId, number, attempt);
    if (started == null) {
      return Ran.without(store(() -> notStarted(runId, number), null, attempt));
    }
    long startedAt = System.nanoTime();
    int outageReruns = 0;
    int conflictReruns = 0;
    while (true) {
      Recorded recorded;
      try {
        recorded =
            runAndRecord(
                definition,
                runId,
                started,
                attempt,
                transaction -> new Recorded(complete(transaction, runId, number, attempt), null));
      } catch (Exception thrown) {
        if (thrown instanceof RecordConflict conflict
            && conflictReruns++ < MAX_CONFLICT_RERUNS
            && attempt.mayContinue()) {
          // Nothing of the batch was recorded and it is still this attempt's: run it again.
          logRerun(runId, number, conflict);
          continue;
        }
        Exception e = RecordConflict.unwrap(thrown);
        if (outageMayBeWaitedOut(e, attempt)
            && outageReruns++ < MAX_OUTAGE_RERUNS
            && awaitDatabase(runId, number, e, attempt)) {
          long sentAt = System.nanoTime();
          if (store(() -> renew(runId, number, attempt), null, attempt) == 1) {
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
          return Ran.without(store(() -> notStarted(runId, number), null, attempt));
        }
        Failed failed = attemptFailed(runId, number, e, attempt);
        attempt.release();
        throw headFailure(failed, e);
      }
      attempt.release();
      if (recorded.completed() != null) {
        metrics.recordSlotTime(recorded.completed());
        return new Ran(
            new BatchResult(BatchOutcome.COMPLETED, started.size()), System.nanoTime() - startedAt);
      }
      // Lost its slot while running (run recovered or batch failed meanwhile): its keys are not
      // counted here; whoever holds the batch now will count them.
      return Ran.without(store(() -> notStarted(runId, number), null, attempt));
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
          store(
              () ->
                  Started.of(
                      batches
                          .startHead(runId, number, attempt.holder(), attempt.lease().toMillis())
                          .orElse(null)),
              null,
              attempt);
      if (started != null) {
        attempt.hold(number, sentAt);
        return started;
      }
      if (!attempt.mayContinue()
          || !store(
              () -> RunSlots.heldLive(batches, runId, number, attempt.holder()), null, attempt)
          || !pause(HOLDER_POLL_MILLIS)) {
        return null;
      }
      attempt.waitedForHolder();
    }
  }

  /**
   * The lane's rest after a batch whose run and record took {@code batchNanos}, at the run's {@code
   * niceRatio} ({@link LaneRest#restNanos}): sleeps in slices of at most a second and, after each
   * that leaves more to rest, asks whether the run may still start a batch ({@link
   * RunStore#mayStartBatches}), so a stop, pause, hold or spent failure budget ends the rest within
   * a second, and a fence (cancel, deadline, lost lease: it interrupts the sleep) at once. The
   * attempt holds no batch while it rests; its heartbeats go on.
   *
   * @return whether the lane may take another batch: the rest ran its course (or there was none);
   *     false when it was cut short
   */
  private boolean rest(long runId, double niceRatio, long batchNanos, BatchAttempt attempt) {
    long restNanos = LaneRest.restNanos(niceRatio, batchNanos);
    if (restNanos == 0) {
      return true;
    }
    long until = System.nanoTime() + restNanos;
    while (true) {
      if (!pause(LaneRest.sliceMillis(until - System.nanoTime())) || !attempt.mayContinue()) {
        return false;
      }
      if (until - System.nanoTime() <= 0) {
        return true;
      }
      if (!store(() -> runs.mayStartBatches(runId) > 0, null, attempt)) {
        LOG.debug("Run {}: may start no batch; its lane stops resting", runId);
        return false;
      }
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

  /**
   * The batch an earlier attempt of this activity held in its chain when it died, once that
   * attempt's lease has run out (waiting while it is live); null if there is none.
   */
  private Started resumeHeldOnceFree(long runId, int headNumber, BatchAttempt attempt) {
    while (true) {
      long sentAt = System.nanoTime();
      Started held = store(() -> resumeHeld(runId, headNumber, true, attempt), null, attempt);
      if (held != null) {
        attempt.hold(held.number(), sentAt);
        return held;
      }
      if (!attempt.mayContinue()
          || !store(
              () -> RunSlots.chainHeldLive(batches, runId, headNumber, attempt.holder()),
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
  private Started resumeHeld(long runId, int headNumber, boolean newAttempt, BatchAttempt attempt) {
    long lease = attempt.lease().toMillis();
    Optional<BatchStart> held =
        batches.resumeChain(runId, headNumber, attempt.holder(), lease, newAttempt);
    return Started.of(held.orElse(null));
  }

  /**
   * Takes the run's lowest pending batch into this chain (pending → running in one step), if the
   * run is running, not stopping, its cap covers {@code lane} and its slot holders are fewer than
   * its cap; null otherwise ({@link BatchStore#claimNext}). It adds a slot holder, so it counts
   * them under the run row's lock, as every claim that adds one does (R5b): one call.
   */
  private Started claimNext(long runId, int headNumber, int lane, BatchAttempt attempt) {
    return Started.of(
        batches
            .claimNext(runId, headNumber, lane, attempt.holder(), attempt.lease().toMillis())
            .orElse(null));
  }

  private BatchResult notStarted(long runId, int number) {
    Optional<BatchProgress> batch = batches.progress(runId, number);
    if (batch.isPresent() && BatchStatus.fromWire(batch.get().status()) == BatchStatus.COMPLETED) {
      return new BatchResult(BatchOutcome.ALREADY_COMPLETED, batch.get().size());
    }
    return new BatchResult(BatchOutcome.SKIPPED, 0);
  }

  /** The batch's outcome as {@link BatchMetrics} records it. */
  private static BatchMetrics.Outcome outcome(String backfill, Double slotSeconds) {
    return new BatchMetrics.Outcome(
        backfill, slotSeconds == null ? null : Math.max(0, slotSeconds));
  }

  /**
   * Records batch {@code number} completed ({@link BatchStore#complete}); fails with {@link
   * #SLOT_LOST} if it was not running under this attempt any more.
   */
  private BatchMetrics.Outcome complete(
      Connection transaction, long runId, int number, BatchAttempt attempt) throws SQLException {
    int shard = ShardedCounters.shardOf(number);
    BatchDone done =
        transaction == null
            ? batches.complete(runId, number, attempt.holder(), shard)
            : batches.completeAndCommit(transaction, runId, number, attempt.holder(), shard);
    return outcome(done.backfill(), done.slotSeconds());
  }

  /**
   * {@link #complete} and, only if it recorded the batch, the claim of the chain's next one — one
   * statement ({@link BatchStore#completeAndClaimNext}), so a chained batch costs one round trip of
   * bookkeeping (W2 in docs/benchmarks.md).
   */
  private Recorded completeAndClaimNext(
      Connection transaction,
      long runId,
      int number,
      int headNumber,
      int lane,
      BatchAttempt attempt)
      throws SQLException {
    long sentAt = System.nanoTime();
    int shard = ShardedCounters.shardOf(number);
    long leaseMillis = attempt.lease().toMillis();
    ChainStep step =
        transaction == null
            ? batches.completeAndClaimNext(
                runId, number, attempt.holder(), shard, headNumber, leaseMillis, lane)
            : batches.completeClaimNextAndCommit(
                transaction, runId, number, attempt.holder(), shard, headNumber, leaseMillis, lane);
    return new Recorded(
        outcome(step.backfill(), step.slotSeconds()), Started.of(step.next()), sentAt);
  }

  /**
   * The head batch's failed attempt as the activity's failure: non-retryable when the failure was
   * declared permanent or the batch has no attempts left, else retried after the policy's backoff
   * for its failed attempts. Temporal retries the activity without limit ({@code
   * RunActivityOptions}): attempts that died with their worker are not counted here, nor spent.
   */
  private ApplicationFailure headFailure(Failed failed, Exception e) {
    if (e instanceof PermanentBackfillException) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          failed.error(), DriplineFailure.BATCH_PERMANENT.name(), e);
    }
    if (policy.exhaustedBy(failed.count())) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          failed.error(), DriplineFailure.BATCH_FAILED.name(), e);
    }
    return ApplicationFailure.newFailureWithCauseAndDelay(
        failed.error(),
        DriplineFailure.BATCH_FAILED.name(),
        e,
        policy.retryDelay(Math.max(1, failed.count())));
  }

  /**
   * Records the failed attempt's error and, if it {@code counts}, counts it (the error of the last
   * attempt is what an operator sees while it retries). The attempt is over, so its lease ends with
   * it: the next attempt need not wait for it to run out.
   *
   * @return the batch's failed attempts so far; 0 if the batch was not this attempt's any more, or
   *     the record failed (best effort: the batch is then retried, as PostgreSQL answers again)
   */
  private int recordAttemptFailed(
      long runId, int number, String error, boolean counts, BatchAttempt attempt) {
    try {
      return batches.recordAttemptFailed(runId, number, attempt.holder(), error, counts);
    } catch (RuntimeException e) {
      LOG.warn("Could not record the error of batch {} of run {}", number, runId, e);
      return 0;
    }
  }
}
