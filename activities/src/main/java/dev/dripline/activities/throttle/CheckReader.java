package dev.dripline.activities.throttle;

import dev.dripline.runtime.throttle.CheckKind;
import dev.dripline.runtime.throttle.ThrottleCheck;
import dev.dripline.store.catalogue.CatalogueRepository;
import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Reads one number for a health check: on the check's own database ({@code url}) or Dripline's, in
 * a {@code READ ONLY} transaction under {@code SET LOCAL statement_timeout}, always rolled back;
 * or, for a {@code prometheus} check, from Prometheus ({@link PrometheusReader}). An error, a
 * timeout, no row or a NULL is an unknown reading, never 0.
 *
 * <p>An {@code autovacuum} check counts the autovacuum workers vacuuming or analyzing a table the
 * backfills it applies to declare ({@code backfill_definitions.tables}, read on Dripline's
 * database; every published backfill when it applies to all) or the check itself names ({@code
 * tables}), or their TOAST tables. Names resolve with {@code to_regclass} on the database read, so
 * {@code t} and {@code public.t} are one table; a name that resolves to no table there is left out,
 * and a check whose tables resolve to none, or whose role cannot see which table a worker is on (it
 * needs {@code pg_read_all_stats}, e.g. through {@code pg_monitor}), is unknown.
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

  /**
   * Autovacuum workers of this database on one of the tables named by the text array parameter (or
   * their TOAST tables), the progress views giving each worker's table; then how many of the names
   * resolve here, those that do not, and whether this role sees other roles' progress (without
   * {@code pg_read_all_stats} their {@code relid} and {@code backend_type} read NULL).
   */
  static final String AUTOVACUUM =
      """
      with declared as (
        select d.name, to_regclass(d.name)::oid as relid from unnest(cast(? as text[])) as d(name)
      ), watched as (
        select relid from declared where relid is not null
        union
        select c.reltoastrelid from pg_class c join declared d on c.oid = d.relid
        where c.reltoastrelid <> 0
      ), working as (
        select pid, datid, relid from pg_stat_progress_vacuum
        union all
        select pid, datid, relid from pg_stat_progress_analyze
      )
      select
        (select count(distinct w.pid) from working w join pg_stat_activity a on a.pid = w.pid
         where a.backend_type = 'autovacuum worker'
           and w.datid = (select oid from pg_database where datname = current_database())
           and w.relid in (select relid from watched)),
        (select count(*) from declared where relid is not null),
        (select string_agg(name, ', ' order by name) from declared where relid is null),
        pg_has_role('pg_read_all_stats', 'usage')
      """;

  private final DataSource dataSource;
  private final CatalogueRepository catalogue;
  private final PrometheusReader prometheus;

  public CheckReader(
      DataSource dataSource, CatalogueRepository catalogue, PrometheusReader prometheus) {
    this.dataSource = dataSource;
    this.catalogue = catalogue;
    this.prometheus = prometheus;
  }

  /** The check's reading now; never throws. */
  public CheckReading read(ThrottleCheck check) {
    if (check.kind() == CheckKind.PROMETHEUS) {
      return prometheus.read(check);
    }
    try {
      List<String> tables = check.kind() == CheckKind.AUTOVACUUM ? watchedTables(check) : List.of();
      if (check.kind() == CheckKind.AUTOVACUUM && tables.isEmpty()) {
        return CheckReading.unknown(
            "no table to watch: the backfills it applies to declare none (BackfillDefinition.tables())"
                + " and the check names none (tables)");
      }
      try (Connection connection = connect(check)) {
        return readOnly(connection, check, tables);
      }
    } catch (SQLException | RuntimeException e) {
      return CheckReading.unknown(describe(e));
    }
  }

  /** The check's own tables, then those its backfills declare in the catalogue, each once. */
  private List<String> watchedTables(ThrottleCheck check) {
    Set<String> tables = new LinkedHashSet<>(check.tables());
    tables.addAll(catalogue.declaredTables(check.appliesTo().toArray(String[]::new)));
    return List.copyOf(tables);
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

  private static CheckReading readOnly(
      Connection connection, ThrottleCheck check, List<String> tables) throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      try (Statement statement = connection.createStatement()) {
        statement.execute("set transaction read only");
        statement.execute(
            "set local statement_timeout = " + Math.max(1, check.timeout().toMillis()));
      }
      return check.kind() == CheckKind.AUTOVACUUM
          ? autovacuum(connection, tables)
          : query(connection, check);
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
          case AUTOVACUUM, PROMETHEUS ->
              throw new IllegalStateException(check.kind() + " is not read by one query");
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

  private static CheckReading autovacuum(Connection connection, List<String> tables)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(AUTOVACUUM)) {
      statement.setArray(1, connection.createArrayOf("text", tables.toArray()));
      try (ResultSet row = statement.executeQuery()) {
        row.next();
        long workers = row.getLong(1);
        long resolved = row.getLong(2);
        String missing = row.getString(3);
        boolean seesProgress = row.getBoolean(4);
        if (!seesProgress) {
          return CheckReading.unknown(
              "role "
                  + connection.getMetaData().getUserName()
                  + " cannot see which table an autovacuum worker is on: grant it"
                  + " pg_read_all_stats (or pg_monitor), or give the check a url and user"
                  + " that have it");
        }
        if (resolved == 0) {
          return CheckReading.unknown(
              "none of the watched tables exists in the database read: " + missing);
        }
        return CheckReading.of((double) workers);
      }
    }
  }

  private static String describe(Exception e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return message.length() > 500 ? message.substring(0, 500) : message;
  }
}
