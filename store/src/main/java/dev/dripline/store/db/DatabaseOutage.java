package dev.dripline.store.db;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;

/**
 * Tells a failure to reach PostgreSQL — a refused or lost connection, a server shutting down or
 * starting up, a pool that could not get a connection — from every other failure of a statement.
 * The engine waits out the first kind (PostgreSQL is its source of truth and comes back) instead of
 * spending a batch's attempts on it; the second kind is the batch's own failure.
 */
public final class DatabaseOutage {
  private static final int MAX_CAUSES = 32;

  private DatabaseOutage() {}

  /**
   * True when {@code failure} or one of its causes says PostgreSQL could not be reached: SQLState
   * class 08 (connection exception), 57P01–57P03 (admin shutdown, crash shutdown, cannot connect
   * now), or a connection exception of JDBC's own (e.g. the pool's timeout waiting for a
   * connection).
   */
  public static boolean isConnectionFailure(Throwable failure) {
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++) {
      if (cause instanceof SQLTransientConnectionException
          || cause instanceof SQLNonTransientConnectionException) {
        return true;
      }
      if (cause instanceof SQLException sql && isConnectionState(sql.getSQLState())) {
        return true;
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return false;
  }

  static boolean isConnectionState(String sqlState) {
    return sqlState != null
        && (sqlState.startsWith("08")
            || sqlState.equals("57P01")
            || sqlState.equals("57P02")
            || sqlState.equals("57P03"));
  }
}
