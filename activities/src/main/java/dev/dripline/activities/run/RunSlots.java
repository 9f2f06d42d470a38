package dev.dripline.activities.run;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The run row's lock, which every claim that adds a slot holder takes before it counts the run's
 * holders (spec R5b): the workflow's claims, a chain's claim after it held nothing, whichever
 * execution, attempt or worker makes it. A claim that replaces the holder it completes in the same
 * statement (a chain's next batch) adds none and needs no lock.
 */
final class RunSlots {
  private RunSlots() {}

  /** SQL counting the slot holders of run {@code ?}. */
  static final String COUNT_HOLDERS =
      "select count(*) from batches where run_id = ? and status in ('enqueued', 'running')";

  /**
   * Locks the run's row until the caller's transaction ends (autocommit must be off); false if the
   * run does not exist.
   */
  static boolean lockRun(Connection connection, long runId) throws SQLException {
    try (PreparedStatement lock =
        connection.prepareStatement("select 1 from runs where id = ? for update")) {
      lock.setLong(1, runId);
      try (ResultSet rs = lock.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Which batch {@link #heldLive} looks at: one batch, or the batch a chain holds. */
  enum Held {
    BATCH("number"),
    CHAIN("chain_head");

    private final String column;

    Held(String column) {
      this.column = column;
    }
  }

  /**
   * Whether the batch of run {@code runId} that {@code which} names by {@code number} (its number,
   * or its chain's head) is running under a holder other than {@code exceptHolder} (null: any
   * holder) whose lease is live: an attempt that has not stopped yet, which no other may replace.
   */
  static boolean heldLive(
      Connection connection, long runId, Held which, int number, String exceptHolder)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select 1 from batches where run_id = ? and "
                + which.column
                + " = ? and status = 'running' and holder is distinct from ?"
                + " and lease_until >= now()")) {
      select.setLong(1, runId);
      select.setInt(2, number);
      select.setString(3, exceptHolder);
      try (ResultSet rs = select.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Slot holders of the run, read after {@link #lockRun} in the same transaction. */
  static int holders(Connection connection, long runId) throws SQLException {
    try (PreparedStatement count = connection.prepareStatement(COUNT_HOLDERS)) {
      count.setLong(1, runId);
      try (ResultSet rs = count.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
