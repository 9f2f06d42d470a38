package dev.dripline.spi;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A definition whose batches write to Dripline's own database, and which lets Dripline commit a
 * batch's writes together with its bookkeeping: the writes, the batch's completion and, in a chain,
 * the claim of the next batch are one transaction.
 *
 * <p>That gives two things a plain definition cannot have. A batch whose writes committed is never
 * left unrecorded (a worker killed after the commit finds it completed), and a batch that lost its
 * slot meanwhile (its run's slots were recovered) commits nothing. And it costs one commit per
 * batch instead of two, and each commit waits for a WAL flush.
 *
 * <p>{@link #processBatch(BackfillContext, KeyRange, Connection)} must do all its writes through
 * {@code transaction} and must neither commit, roll back nor change its auto-commit or isolation;
 * it should not hold the transaction open on slow work outside the database (row locks are held
 * until the batch is recorded). Callers outside a batch attempt (tests, tools) call {@link
 * #processBatch(BackfillContext, KeyRange)}, which runs the same work in a transaction of its own.
 */
public interface TransactionalBackfillDefinition extends LongKeyBackfillDefinition {

  /**
   * Processes the keys in scope within {@code range} inside {@code transaction}, which Dripline
   * commits together with the batch's completion, or rolls back.
   *
   * @throws PermanentBackfillException when retrying cannot help; the batch fails at once
   * @throws Exception any other failure, retried by the engine with backoff
   */
  void processBatch(BackfillContext context, KeyRange range, Connection transaction)
      throws Exception;

  /**
   * Processes the keys in scope within {@code range} in a transaction of its own on the context's
   * {@link BackfillContext#dataSource()}: {@link #processBatch(BackfillContext, KeyRange,
   * Connection)}, committed when it returns, rolled back when it throws.
   */
  @Override
  default void processBatch(BackfillContext context, KeyRange range) throws Exception {
    if (context.dataSource() == null) {
      throw new IllegalStateException(
          "backfill " + context.backfill() + " needs the context's data source for its batch");
    }
    try (Connection connection = context.dataSource().getConnection()) {
      connection.setAutoCommit(false);
      try {
        processBatch(context, range, connection);
        connection.commit();
      } catch (Exception e) {
        try {
          connection.rollback();
        } catch (SQLException rollback) {
          e.addSuppressed(rollback);
        }
        throw e;
      }
    }
  }
}
