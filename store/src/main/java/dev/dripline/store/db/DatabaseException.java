package dev.dripline.store.db;

import java.sql.SQLException;

/** An unchecked wrapper for a failed SQL statement; {@link #sqlState()} tells what failed. */
public class DatabaseException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DatabaseException(SQLException cause) {
    super(cause.getMessage(), cause);
  }

  /** The SQLSTATE of the failure, e.g. {@code 23505} for a unique violation. */
  public String sqlState() {
    return ((SQLException) getCause()).getSQLState();
  }

  public boolean isUniqueViolation() {
    return "23505".equals(sqlState());
  }
}
