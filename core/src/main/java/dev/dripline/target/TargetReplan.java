package dev.dripline.target;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Operator replan (PRODUCT T7), the one implementation shared by the API and the target workflow's
 * activity: resets the streak, its anchors and the error, forgets the current run and returns the
 * target to pending_backfill, due at once.
 *
 * <p>It only changes the target's row. The caller stops the cancelled run (signal {@code stop} to
 * workflow {@code dripline-run-<id>}) after the transaction commits, so that a run never outlives
 * the decision to cancel it while the decision could still roll back.
 */
public final class TargetReplan {
  private TargetReplan() {}

  /**
   * Replans target {@code name} inside the caller's transaction, holding its row lock.
   *
   * @param dryRun report what would happen and change nothing
   * @return {@code found=false} if there is no such target; otherwise the state and streak before,
   *     and the current run if it is still active (pending, running or paused) — the run to stop
   */
  public static ReplanResult replan(Connection connection, String name, boolean dryRun)
      throws SQLException {
    // Settings only shape backoff arithmetic, which a replan does not do.
    TargetRows.Row row = TargetRows.lock(connection, name, null);
    if (row == null) {
      return new ReplanResult(false, null, 0, null);
    }
    TargetSnapshot before = row.snapshot();
    Long activeRun = activeRun(connection, before.currentRunId());
    if (!dryRun) {
      TargetRows.write(connection, before.state(), TargetTransitions.replanned(before));
    }
    return new ReplanResult(true, before.state(), before.consecutiveFailures(), activeRun);
  }

  private static Long activeRun(Connection connection, Long runId) throws SQLException {
    if (runId == null) {
      return null;
    }
    try (PreparedStatement select =
        connection.prepareStatement(
            "select 1 from runs where id = ? and status in ('pending', 'running', 'paused')")) {
      select.setLong(1, runId);
      try (ResultSet rs = select.executeQuery()) {
        return rs.next() ? runId : null;
      }
    }
  }
}
