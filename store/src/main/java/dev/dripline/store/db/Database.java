package dev.dripline.store.db;

import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Explicit JDBC transactions over Dripline's PostgreSQL pool, for the statements not yet moved to
 * the tables' Micronaut Data repositories (docs/design.md, "Records"), and the waits of an outage
 * ({@link #awaitAvailable}). Its connections are the plain pool's ({@link PlainDataSource}): they
 * never join a {@code @Transactional} method's transaction.
 */
@Singleton
public class Database {
  private static final Logger LOG = LoggerFactory.getLogger(Database.class);
  private static final long FIRST_PROBE_DELAY_MILLIS = 250;
  private static final long MAX_PROBE_DELAY_MILLIS = 5_000;

  private final DataSource dataSource;

  public Database(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Work done inside one transaction. */
  @FunctionalInterface
  public interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /** Runs {@code work} in a transaction: committed if it returns, rolled back if it throws. */
  public <T> T inTransaction(Work<T> work) {
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      try {
        T result = work.run(connection);
        connection.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(connection, e);
        throw e;
      } finally {
        resetAutoCommit(connection, autoCommit);
      }
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  /**
   * Rolls back after {@code failure}; a rollback that fails too (the connection is gone) is added
   * to it rather than replacing it, so callers see the cause (e.g. PostgreSQL shutting down, which
   * {@link DatabaseOutage} recognises; a broken pooled connection only says "Connection is
   * closed").
   */
  public static void rollbackQuietly(Connection connection, Exception failure) {
    try {
      connection.rollback();
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /** Restores auto-commit; on a connection that is gone, nothing to restore (the pool drops it). */
  public static void resetAutoCommit(Connection connection, boolean autoCommit) {
    try {
      connection.setAutoCommit(autoCommit);
    } catch (SQLException | RuntimeException e) {
      // A broken connection: the pool evicts it; the caller's own outcome stands.
    }
  }

  /** Work inside one transaction that returns nothing. */
  @FunctionalInterface
  public interface Action {
    void run(Connection connection) throws SQLException;
  }

  /** Runs {@code action} in a transaction, as {@link #inTransaction(Work)}. */
  public void runInTransaction(Action action) {
    inTransaction(
        connection -> {
          action.run(connection);
          return null;
        });
  }

  /** Runs {@code work} on a connection in auto-commit mode (single statements, reads). */
  public <T> T withConnection(Work<T> work) {
    try (Connection connection = dataSource.getConnection()) {
      return work.run(connection);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  /**
   * Waits until PostgreSQL answers again after {@link DatabaseOutage a connection failure}, probing
   * with a doubling delay (250 ms up to 5 s).
   *
   * @param atMost how long to wait in all
   * @param keepWaiting asked before each probe; waiting ends (false) once it says false, e.g. when
   *     the activity waiting was cancelled
   * @return true once a probe succeeded; false if {@code atMost} passed or {@code keepWaiting} said
   *     false first
   */
  public boolean awaitAvailable(Duration atMost, BooleanSupplier keepWaiting) {
    long deadline = System.nanoTime() + atMost.toNanos();
    long delay = FIRST_PROBE_DELAY_MILLIS;
    while (keepWaiting.getAsBoolean()) {
      try (Connection connection = dataSource.getConnection()) {
        if (connection.isValid(5)) {
          return true;
        }
      } catch (SQLException | RuntimeException e) {
        LOG.debug("PostgreSQL does not answer yet: {}", e.toString());
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      try {
        Thread.sleep(Math.min(delay, left / 1_000_000 + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      delay = Math.min(2 * delay, MAX_PROBE_DELAY_MILLIS);
    }
    return false;
  }

  /** The pool itself, for code that manages its own connections (e.g. examples' witnesses). */
  public DataSource dataSource() {
    return dataSource;
  }
}
