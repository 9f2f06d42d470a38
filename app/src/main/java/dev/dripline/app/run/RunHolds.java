package dev.dripline.app.run;

import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What holds the runs of a backfill now: {@code dripline_run_holds(backfill)}, the function the
 * claim obeys, with the brake's and each holding check's row for since, value and threshold.
 */
@Singleton
class RunHolds {
  private static final String HOLDS =
      """
      select h.reason, c.value, c.threshold, coalesce(b.since, c.since) as since
      from unnest(dripline_run_holds(?)) as h(reason)
      left join throttle_brake b on h.reason = 'brake'
      left join throttle_checks c on h.reason <> 'brake' and c.name = h.reason
      order by h.reason
      """;

  private final Database database;

  RunHolds(Database database) {
    this.database = database;
  }

  /** The throttle of a running run of {@code backfill}. */
  RunThrottleResponse of(String backfill) {
    return database.withConnection(connection -> read(connection, backfill));
  }

  private static RunThrottleResponse read(Connection connection, String backfill)
      throws SQLException {
    List<RunThrottleResponse.Reason> reasons = new ArrayList<>();
    Instant since = null;
    try (PreparedStatement holds = connection.prepareStatement(HOLDS)) {
      holds.setString(1, backfill);
      try (ResultSet row = holds.executeQuery()) {
        while (row.next()) {
          reasons.add(
              new RunThrottleResponse.Reason(
                  row.getString("reason"), number(row, "value"), number(row, "threshold")));
          Timestamp held = row.getTimestamp("since");
          if (held != null && (since == null || held.toInstant().isBefore(since))) {
            since = held.toInstant();
          }
        }
      }
    }
    return new RunThrottleResponse(!reasons.isEmpty(), since, List.copyOf(reasons));
  }

  private static Double number(ResultSet row, String column) throws SQLException {
    double value = row.getDouble(column);
    return row.wasNull() ? null : value;
  }
}
