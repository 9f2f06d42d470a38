package dev.dripline.db;

import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Explicit JDBC transactions over Dripline's PostgreSQL pool.
 *
 * <p>The engine's writes are compare-and-set statements with {@code RETURNING} and row locks
 * spanning several statements; an explicit transaction boundary keeps them readable and makes every
 * guard visible at the call site, which generated repositories would hide.
 */
@Singleton
public class Database {
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
        connection.rollback();
        throw e;
      } finally {
        connection.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  /** Runs {@code work} on a connection in auto-commit mode (single statements, reads). */
  public <T> T withConnection(Work<T> work) {
    try (Connection connection = dataSource.getConnection()) {
      return work.run(connection);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  /** The pool itself, for code that manages its own connections (e.g. examples' witnesses). */
  public DataSource dataSource() {
    return dataSource;
  }
}
