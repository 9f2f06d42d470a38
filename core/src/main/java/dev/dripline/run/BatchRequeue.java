package dev.dripline.run;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Retry of a run (spec R8), shared by the HTTP API and the workflow's {@code retry} signal so both
 * behave the same: failed batches — and, for a stopped run, stopped batches — go back to pending
 * with their error cleared; a failed or stopped run with anything to do again is re-opened as
 * running. A completed run is never touched, nor is a live run being stopped ({@code
 * stop_requested_at} set): the stop's finish would stop what a retry re-queued, so such a retry is
 * refused until the run has stopped.
 */
public final class BatchRequeue {
  private BatchRequeue() {}

  /**
   * What a retry did.
   *
   * @param found false if the run does not exist
   * @param statusBefore the run's status before
   * @param requeued batches moved back to pending
   * @param reopened true if planning was unfinished and the run is re-opened for it
   * @param statusAfter the run's status after
   * @param stopping true if nothing was done because the run is live and being stopped
   */
  public record Outcome(
      boolean found,
      RunStatus statusBefore,
      int requeued,
      boolean reopened,
      RunStatus statusAfter,
      boolean stopping) {

    /** Whether the retry changed anything (else the API answers 409). */
    public boolean didSomething() {
      return requeued > 0 || reopened;
    }
  }

  /** Applies a retry inside the caller's transaction; locks the run row. */
  public static Outcome requeue(Connection connection, long runId) throws SQLException {
    RunStatus status;
    boolean planDone;
    boolean stopRequested;
    // The row lock serialises a retry against the stop being recorded and the run's finish.
    try (PreparedStatement select =
        connection.prepareStatement(
            "select status, plan_done, stop_requested_at is not null from runs where id = ?"
                + " for update")) {
      select.setLong(1, runId);
      try (ResultSet rs = select.executeQuery()) {
        if (!rs.next()) {
          return new Outcome(false, null, 0, false, null, false);
        }
        status = RunStatus.fromWire(rs.getString(1));
        planDone = rs.getBoolean(2);
        stopRequested = rs.getBoolean(3);
      }
    }
    if (status == RunStatus.COMPLETED || status == RunStatus.PENDING) {
      return new Outcome(true, status, 0, false, status, false);
    }
    if (stopRequested && status.isActive()) {
      return new Outcome(true, status, 0, false, status, true);
    }
    List<String> from =
        status == RunStatus.STOPPED ? List.of("failed", "stopped") : List.of("failed");
    int requeued;
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches set status = 'pending', error = null, finished_at = null,"
                + " claim_token = null, chain_head = null where run_id = ? and status = any (?)")) {
      update.setLong(1, runId);
      update.setArray(2, connection.createArrayOf("text", from.toArray()));
      requeued = update.executeUpdate();
    }
    boolean ended = status == RunStatus.FAILED || status == RunStatus.STOPPED;
    boolean reopened = ended && !planDone;
    RunStatus after = status;
    if (ended && (requeued > 0 || reopened)) {
      try (PreparedStatement reopen =
          connection.prepareStatement(
              "update runs set status = 'running', error = null, finished_at = null,"
                  + " stop_requested_at = null, updated_at = now() where id = ?")) {
        reopen.setLong(1, runId);
        reopen.executeUpdate();
      }
      after = RunStatus.RUNNING;
    } else if (requeued > 0) {
      try (PreparedStatement touch =
          connection.prepareStatement(
              "update runs set error = null, updated_at = now() where id = ?")) {
        touch.setLong(1, runId);
        touch.executeUpdate();
      }
    }
    return new Outcome(true, status, requeued, reopened, after, false);
  }
}
