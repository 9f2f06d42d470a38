package dev.dripline.activities.run;

import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.spi.BackfillContext;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchDone;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.ChainStep;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs the definition on one batch and records it, so that the batch is recorded at most once: as
 * completed only while it still holds its slot under the attempt's lease, its keys counted in the
 * same transaction as that transition. A transactional definition's writes commit with the record
 * or not at all.
 */
@Singleton
class BatchRecorder {
  /** SQLSTATE of {@code dripline_slot_lost} (migration V10): the batch no longer held its slot. */
  static final String SLOT_LOST = "DL001";

  private final DataTransactions transactions;
  private final BatchRepository batches;
  private final RunOptionsReader optionsReader;

  BatchRecorder(
      DataTransactions transactions, BatchRepository batches, RunOptionsReader optionsReader) {
    this.transactions = transactions;
    this.batches = batches;
    this.optionsReader = optionsReader;
  }

  /**
   * What recording a batch did: its completion (null if it no longer held its slot, so nothing was
   * recorded) and the batch the chain claimed next, if any, with when its claim was sent.
   */
  record Recorded(BatchMetrics.Outcome completed, StartedBatch next, long sentAtNanos) {
    Recorded(BatchMetrics.Outcome completed, StartedBatch next) {
      this(completed, next, System.nanoTime());
    }
  }

  /** A batch's record statement. */
  @FunctionalInterface
  interface Recording {
    /**
     * Records the batch: in auto-commit when {@code transaction} is null, else on it and with its
     * COMMIT in the same round trip.
     */
    Recorded run(Connection transaction) throws SQLException;
  }

  /**
   * Runs the definition on {@code batch}, then {@code record}, the statement that records it — or,
   * when the batch no longer held its slot, fails with {@link #SLOT_LOST} and records nothing
   * ({@link Recorded#completed()} null). Any other definition's batch is recorded by that one
   * statement in auto-commit: one round trip. A {@linkplain KeyedBackfill#transactional()
   * transactional} one (a {@link dev.dripline.spi.TransactionalBackfillDefinition} or a table
   * definition) works inside a transaction ({@link DataTransactions}) that the record joins, so its
   * writes commit with the record or not at all: its own statements, the record and the COMMIT.
   *
   * @throws RecordConflict when PostgreSQL rolled the record back and says to try again
   * @throws Exception what the definition threw, or the record; nothing of the batch was recorded
   */
  Recorded runAndRecord(
      KeyedBackfill definition,
      long runId,
      StartedBatch batch,
      BatchAttempt attempt,
      Recording record)
      throws Exception {
    BackfillContext context =
        optionsReader.context(runId, definition.definition(), batch.options(), batch.pool());
    if (!definition.transactional()) {
      definition.processBatch(context, batch.range());
      requireNotFenced(attempt);
      try {
        return record.run(null);
      } catch (RuntimeException e) {
        return recordFailed(e);
      }
    }
    try {
      // A failure inside is raised as it was raised, even when ending the transaction fails too
      // (DataTransactions): a lost connection stays an outage to wait out.
      return transactions.inTransaction(
          connection -> {
            runInTransaction(definition, context, batch, attempt, connection);
            return record.run(connection);
          });
    } catch (DefinitionFailed failed) {
      throw failed.failure();
    } catch (RuntimeException e) {
      return recordFailed(e);
    }
  }

  /** The definition's work on {@code connection}; a fence cancels its statement there. */
  private static void runInTransaction(
      KeyedBackfill definition,
      BackfillContext context,
      StartedBatch batch,
      BatchAttempt attempt,
      Connection connection) {
    attempt.statementConnection(connection);
    try {
      definition.processBatch(context, batch.range(), connection);
      requireNotFenced(attempt);
    } catch (Exception e) {
      throw new DefinitionFailed(e);
    } finally {
      attempt.statementConnection(null);
    }
  }

  /**
   * A failed record: nothing recorded if the batch had lost its slot; a {@link RecordConflict} if
   * PostgreSQL rolled it back and says to try again; else the failure itself.
   */
  private static Recorded recordFailed(RuntimeException failure) {
    if (slotLost(failure)) {
      return new Recorded(null, null);
    }
    if (RecordConflict.rolledBack(failure)) {
      throw new RecordConflict(failure);
    }
    throw failure;
  }

  /**
   * Records batch {@code number} completed ({@link BatchRepository#complete}); fails with {@link
   * #SLOT_LOST} if it was not running under this attempt any more.
   */
  Recorded complete(Connection transaction, long runId, int number, BatchAttempt attempt)
      throws SQLException {
    int shard = ShardedCounters.shardOf(number);
    BatchDone done =
        transaction == null
            ? batches.complete(runId, number, attempt.holder(), shard)
            : batches.completeAndCommit(transaction, runId, number, attempt.holder(), shard);
    return new Recorded(outcome(done.backfill(), done.slotSeconds()), null);
  }

  /**
   * {@link #complete} and, only if it recorded the batch, the claim of the chain's next one — one
   * statement ({@link BatchRepository#completeAndClaimNext}), so a chained batch costs one round
   * trip of bookkeeping.
   */
  Recorded completeAndClaimNext(
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
        outcome(step.backfill(), step.slotSeconds()), StartedBatch.of(step.next()), sentAt);
  }

  /** The batch's outcome as {@link BatchMetrics} records it. */
  private static BatchMetrics.Outcome outcome(String backfill, Double slotSeconds) {
    return new BatchMetrics.Outcome(
        backfill, slotSeconds == null ? null : Math.max(0, slotSeconds));
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
   * The record of a batch that PostgreSQL rolled back whole, as a deadlock's victim (SQLSTATE
   * 40P01) or a serialization failure (40001), which say to try again: nothing of the batch was
   * recorded (a transactional definition's writes rolled back with it) and the batch is still the
   * attempt's, which runs it again rather than count a failed attempt. A safety net: the engine's
   * statements take their locks in one order (migration V25); a transactional definition's own
   * writes may still deadlock with others.
   */
  static final class RecordConflict extends RuntimeException {
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
}
