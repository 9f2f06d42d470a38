package dev.dripline.target;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Reads and writes rows of table {@code targets} as {@link TargetSnapshot}s, so that the worker's
 * activities and the API apply {@link TargetTransitions} to exactly the same columns.
 *
 * <p>Invariant: {@link #write} stores every field a transition may change and nothing else, and
 * only while the row is still in the state it was read in (a compare-and-set; callers also hold the
 * row lock from {@link #lock}).
 */
public final class TargetRows {
  private static final String COLUMNS =
      "t.name, t.backfill, t.options::text as options, t.group_name, t.state,"
          + " t.consecutive_failures, t.first_failed_at, t.last_error, t.last_attempt_at,"
          + " t.next_attempt_at, t.current_run_id, t.observed_processed_keys, t.retry_run_id,"
          + " t.attempt_id,"
          + " (select count(*) from live_batches l where l.target_name = t.name"
          + " and l.status = 'queued') as queued_live_batches,"
          + " (select min(l.created_at) from live_batches l where l.target_name = t.name"
          + " and l.status = 'queued') as oldest_queued_at,"
          + " now() as db_now";

  private TargetRows() {}

  /**
   * A target row as read, with what the snapshot does not carry.
   *
   * @param snapshot the record and its backlog
   * @param optionsJson the target's options as stored
   * @param observedProcessedKeys processed keys of the current run when last observed
   * @param now the transaction's clock (PostgreSQL {@code now()}), so every process uses one clock
   * @param attemptId the planning attempt the target's current capacity slot was taken for, or
   *     {@code null}: a run saved by that attempt carries it ({@code runs.target_attempt})
   */
  public record Row(
      TargetSnapshot snapshot,
      String optionsJson,
      long observedProcessedKeys,
      Instant now,
      Long attemptId) {}

  /** Reads the row without locking it, or {@code null} if there is no such target. */
  public static Row read(Connection connection, String name, TargetSettings settings)
      throws SQLException {
    return select(connection, name, settings, "");
  }

  /**
   * Reads and locks the row ({@code for update}) until the transaction ends, or {@code null} if
   * there is no such target.
   */
  public static Row lock(Connection connection, String name, TargetSettings settings)
      throws SQLException {
    return select(connection, name, settings, " for update of t");
  }

  private static Row select(
      Connection connection, String name, TargetSettings settings, String locking)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select " + COLUMNS + " from targets t where t.name = ?" + locking)) {
      select.setString(1, name);
      try (ResultSet rs = select.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        Long currentRunId = nullableLong(rs, "current_run_id");
        TargetSnapshot snapshot =
            new TargetSnapshot(
                rs.getString("name"),
                true,
                rs.getString("backfill"),
                rs.getString("group_name"),
                TargetState.fromWire(rs.getString("state")),
                rs.getInt("consecutive_failures"),
                instant(rs, "first_failed_at"),
                rs.getString("last_error"),
                instant(rs, "last_attempt_at"),
                instant(rs, "next_attempt_at"),
                currentRunId,
                rs.getLong("queued_live_batches"),
                instant(rs, "oldest_queued_at"),
                settings,
                nullableLong(rs, "retry_run_id"));
        return new Row(
            snapshot,
            rs.getString("options"),
            rs.getLong("observed_processed_keys"),
            instant(rs, "db_now"),
            nullableLong(rs, "attempt_id"));
      }
    }
  }

  /**
   * Stores {@code after}'s state, streak, anchors, error, attempt times, current run and run to
   * retry, if the row is still in {@code expected} state. A target that enters pending_backfill
   * joins the end of the line for capacity ({@code waiting_since}, see {@link TargetLine}); one
   * that stays there keeps its place.
   *
   * @return false if the row was not in {@code expected} state (or is gone): nothing was written
   */
  public static boolean write(Connection connection, TargetState expected, TargetSnapshot after)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update targets set state = ?, consecutive_failures = ?, first_failed_at = ?,"
                + " last_error = ?, last_attempt_at = ?, next_attempt_at = ?,"
                + " current_run_id = ?, retry_run_id = ?,"
                + " waiting_since = case when ? = 'pending_backfill' and state <> 'pending_backfill'"
                + " then now() else waiting_since end, updated_at = now()"
                + " where name = ? and state = ?")) {
      update.setString(1, after.state().wire());
      update.setInt(2, after.consecutiveFailures());
      setInstant(update, 3, after.firstFailedAt());
      update.setString(4, after.lastError());
      setInstant(update, 5, after.lastAttemptAt());
      setInstant(update, 6, after.nextAttemptAt());
      setLong(update, 7, after.currentRunId());
      setLong(update, 8, after.retryRunId());
      update.setString(9, after.state().wire());
      update.setString(10, after.name());
      update.setString(11, expected.wire());
      return update.executeUpdate() == 1;
    }
  }

  private static Long nullableLong(ResultSet rs, String column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }

  private static void setLong(PreparedStatement statement, int index, Long value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.BIGINT);
    } else {
      statement.setLong(index, value);
    }
  }

  /** A timestamptz column as an instant; {@code null} stays {@code null}. */
  public static Instant instant(ResultSet rs, String column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  /** Binds an instant to a timestamptz parameter; {@code null} stays {@code null}. */
  public static void setInstant(PreparedStatement statement, int index, Instant value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
    } else {
      statement.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
    }
  }
}
