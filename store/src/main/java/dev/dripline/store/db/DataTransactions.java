package dev.dripline.store.db;

import io.micronaut.transaction.TransactionOperations;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Micronaut Data transactions for work that mixes repository calls with statements not yet moved to
 * a repository: the work gets the transaction's own connection, so its JDBC statements and the
 * repositories' calls commit or roll back together. (A connection from {@link Database} never joins
 * such a transaction: it is the plain pool's.) Programmatic, for classes that must not carry AOP
 * annotations, such as Temporal activity implementations.
 */
@Singleton
public class DataTransactions {
  private final TransactionOperations<Connection> transactions;

  public DataTransactions(TransactionOperations<Connection> transactions) {
    this.transactions = transactions;
  }

  /**
   * Runs {@code work} in a transaction — the caller's, if it has one, else a new one, committed if
   * the work returns and rolled back if it throws. An {@link SQLException} is raised as a {@link
   * DatabaseException}, as {@link Database#inTransaction} does.
   */
  public <T> T inTransaction(Database.Work<T> work) {
    return execute(work, false);
  }

  /** Runs {@code work} in a transaction that is rolled back whatever it did: a dry run. */
  public <T> T rolledBack(Database.Work<T> work) {
    return execute(work, true);
  }

  /**
   * A failure is raised as the work raised it, even when the transaction's rollback or clean-up
   * fails too (then added to it, suppressed): on a lost connection they fail with "Connection is
   * closed", which alone would not tell an outage ({@link DatabaseOutage}).
   */
  private <T> T execute(Database.Work<T> work, boolean rollBack) {
    RuntimeException[] raised = new RuntimeException[1];
    try {
      return transactions.executeWrite(
          status -> {
            if (rollBack) {
              status.setRollbackOnly();
            }
            try {
              return run(work, status.getConnection());
            } catch (RuntimeException e) {
              raised[0] = e;
              throw e;
            }
          });
    } catch (RuntimeException e) {
      if (raised[0] != null && raised[0] != e) {
        raised[0].addSuppressed(e);
        throw raised[0];
      }
      throw e;
    }
  }

  private static <T> T run(Database.Work<T> work, Connection connection) {
    try {
      return work.run(connection);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }
}
