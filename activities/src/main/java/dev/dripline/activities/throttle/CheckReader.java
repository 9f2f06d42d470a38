package dev.dripline.activities.throttle;

import dev.dripline.store.db.Database;
import dev.dripline.store.throttle.CheckKind;
import dev.dripline.store.throttle.ThrottleCheck;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.Properties;
import javax.sql.DataSource;

/**
 * Reads one number for a health check: on the check's own database ({@code url}) or Dripline's, in
 * a {@code READ ONLY} transaction under {@code SET LOCAL statement_timeout}, always rolled back. An
 * error, a timeout, no row or a NULL is an unknown reading, never 0.
 */
@Singleton
public class CheckReader {
  /** Non-idle client backends but the checker's own, optionally only those running long. */
  static final String ACTIVE_QUERIES =
      """
      select count(*) from pg_stat_activity
      where backend_type = 'client backend' and state <> 'idle' and pid <> pg_backend_pid()
        and (cast(? as float8) is null
             or query_start < statement_timestamp() - make_interval(secs => cast(? as float8)))
      """;

  /** On a replica: seconds since the last replayed transaction's commit on the primary. */
  static final String REPLICA_LAG_ON_REPLICA =
      "select extract(epoch from now() - pg_last_xact_replay_timestamp())";

  /** On the primary: the worst replay lag of its streaming replicas (no replica: NULL). */
  static final String REPLICA_LAG_ON_PRIMARY =
      "select max(extract(epoch from replay_lag)) from pg_stat_replication";

  private final DataSource dataSource;

  public CheckReader(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The check's reading now; never throws. */
  public CheckReading read(ThrottleCheck check) {
    try (Connection connection = connect(check)) {
      return readOnly(connection, check);
    } catch (SQLException | RuntimeException e) {
      return CheckReading.unknown(describe(e));
    }
  }

  private Connection connect(ThrottleCheck check) throws SQLException {
    if (check.url() == null) {
      return dataSource.getConnection();
    }
    Properties properties = new Properties();
    if (check.user() != null) {
      properties.setProperty("user", check.user());
    }
    if (check.password() != null) {
      properties.setProperty("password", check.password());
    }
    long seconds = Math.max(1, check.timeout().toSeconds());
    properties.setProperty("connectTimeout", Long.toString(seconds));
    properties.setProperty("loginTimeout", Long.toString(seconds));
    // A replica that stops answering mid-read must not hold the evaluator past its timeout.
    properties.setProperty("socketTimeout", Long.toString(seconds + 5));
    properties.setProperty("ApplicationName", "dripline-throttle-" + check.name());
    return DriverManager.getConnection(check.url(), properties);
  }

  private static CheckReading readOnly(Connection connection, ThrottleCheck check)
      throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      try (Statement statement = connection.createStatement()) {
        statement.execute("set transaction read only");
        statement.execute(
            "set local statement_timeout = " + Math.max(1, check.timeout().toMillis()));
      }
      return query(connection, check);
    } finally {
      try {
        connection.rollback();
      } catch (SQLException e) {
        // A broken connection: the pool evicts it; the reading stands.
      }
      Database.resetAutoCommit(connection, autoCommit);
    }
  }

  private static CheckReading query(Connection connection, ThrottleCheck check)
      throws SQLException {
    String sql =
        switch (check.kind()) {
          case SQL -> check.query();
          case ACTIVE_QUERIES -> ACTIVE_QUERIES;
          case REPLICA_LAG -> check.url() == null ? REPLICA_LAG_ON_PRIMARY : REPLICA_LAG_ON_REPLICA;
        };
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      if (check.kind() == CheckKind.ACTIVE_QUERIES) {
        Duration olderThan = check.olderThan();
        Double seconds = olderThan == null ? null : olderThan.toMillis() / 1000.0;
        statement.setObject(1, seconds, Types.DOUBLE);
        statement.setObject(2, seconds, Types.DOUBLE);
      }
      try (ResultSet rows = statement.executeQuery()) {
        if (!rows.next()) {
          return CheckReading.unknown("the query returned no row");
        }
        Object value = rows.getObject(1);
        if (value == null) {
          return CheckReading.unknown("the query returned NULL");
        }
        if (!(value instanceof Number number)) {
          return CheckReading.unknown(
              "the query returned " + value.getClass().getSimpleName() + ", not a number");
        }
        return CheckReading.of(number.doubleValue());
      }
    }
  }

  private static String describe(Exception e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return message.length() > 500 ? message.substring(0, 500) : message;
  }
}
