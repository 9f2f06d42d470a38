package dev.dripline.target;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Operator replan (spec T7), the one implementation shared by the API and the target workflow's
 * activity: resets the streak, its anchors, the error and the run to retry, forgets the current run
 * and returns the target to pending_backfill, due at once.
 *
 * <p>In the same transaction it stops the target's active runs in their records ({@link
 * TargetRunStops}): a pending one ends stopped, a running or paused one has its stop recorded. The
 * caller delivers those stops to the runs' workflows after the transaction commits, so that a run
 * never outlives the decision to cancel it while the decision could still roll back — and once it
 * has committed, nothing (the reconciler, a later target of the same name) revives a run it left.
 */
public final class TargetReplan {
  private TargetReplan() {}

  /**
   * A replan done.
   *
   * @param result what the API and the workflow report
   * @param stopping the running or paused runs whose recorded stop is to be delivered
   */
  public record Replanned(ReplanResult result, List<TargetRunStops.RunToStop> stopping) {}

  /**
   * Replans target {@code name} inside the caller's transaction, holding its row lock.
   *
   * @param dryRun report what would happen and change nothing
   * @return {@code found=false} if there is no such target; otherwise the state and streak before,
   *     and the current run if it is still active (pending, running or paused) — the run to stop
   */
  public static ReplanResult replan(Connection connection, String name, boolean dryRun)
      throws SQLException {
    if (!dryRun) {
      return replanAndStopRuns(connection, name).result();
    }
    // Settings only shape backoff arithmetic, which a replan does not do.
    TargetRows.Row row = TargetRows.lock(connection, name, null);
    if (row == null) {
      return new ReplanResult(false, null, 0, null);
    }
    TargetSnapshot before = row.snapshot();
    return new ReplanResult(
        true,
        before.state(),
        before.consecutiveFailures(),
        activeRun(connection, before.currentRunId()));
  }

  /**
   * Replans target {@code name} inside the caller's transaction and stops its active runs in their
   * records; the caller delivers {@link Replanned#stopping()} after the commit.
   */
  public static Replanned replanAndStopRuns(Connection connection, String name)
      throws SQLException {
    TargetRows.Row row = TargetRows.lock(connection, name, null);
    if (row == null) {
      return new Replanned(new ReplanResult(false, null, 0, null), List.of());
    }
    TargetSnapshot before = row.snapshot();
    Long activeRun = activeRun(connection, before.currentRunId());
    TargetRows.write(connection, before.state(), TargetTransitions.replanned(before));
    List<TargetRunStops.RunToStop> stopping =
        TargetRunStops.stopActiveRuns(connection, name, before.currentRunId(), null);
    return new Replanned(
        new ReplanResult(true, before.state(), before.consecutiveFailures(), activeRun), stopping);
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
