package dev.dripline.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostgreSQL's own counts for W2, on the bench's connection to the bench database:
 *
 * <ul>
 *   <li>{@code pg_stat_statements} (top-level statements of this database only; reset per database
 *       before each measured run), grouped by the text of each normalised statement into {@link
 *       #CATEGORIES};
 *   <li>{@code pg_stat_database}: commits and rollbacks of this database;
 *   <li>{@code pg_stat_user_tables}: rows written to tables other than the examples' {@link
 *       #DATA_TABLES} (the systems' bookkeeping: Dripline's {@code runs}, {@code batches},
 *       counters; Spring Batch's {@code batch_*}) and rows updated in those.
 * </ul>
 *
 * The last two are flushed by each backend at most once a second and by an idle one after ~10 s, so
 * they are read after a settle period; {@code pg_stat_statements} is exact at once.
 */
final class W2Stats {
  /**
   * Statement categories: {@code data} is the batch's UPDATE, {@code plan} the scope query, {@code
   * txctl} transaction control (BEGIN, COMMIT, SET …), {@code spring} Spring Batch's JobRepository
   * (its tables and {@code select nextval(?)} of its id sequences; Dripline's ids come from {@code
   * bigserial} defaults, never a top-level {@code nextval}), {@code bench} the bench's own polls
   * and reads, {@code other} everything else: Dripline's engine (runs, batches, claims, planning
   * cursor, counters, metrics snapshots) and anything running in the background of the database at
   * the time.
   */
  static final List<String> CATEGORIES =
      List.of("data", "plan", "txctl", "spring", "other", "bench");

  /** The tables W2's examples update ({@link W2Example}): their writes are the data, not books. */
  static final String DATA_TABLES = "('example_users', 'example_accounts')";

  /** Marks the bench's own statements so they fall into {@code bench}. */
  static final String BENCH_MARK = "/* w2-bench */ ";

  private static final String CATEGORY =
      "case"
          + " when query ~* '(w2-bench|pg_stat_statements|pg_stat_database|pg_stat_user_tables)'"
          + " then 'bench'"
          + " when query ~* '^\\s*update\\s+example_(users|accounts)\\s' then 'data'"
          + " when query ~* '^\\s*select\\s+id\\s+from\\s+example_(users|accounts)\\s'"
          + " then 'plan'"
          + " when query ~* '^\\s*(begin|commit|rollback|start\\s+transaction|savepoint|release"
          + "|set\\s|show\\s|reset\\s)' then 'txctl'"
          + " when query ~* 'batch_(job|step)_' or query ~* '^\\s*select\\s+nextval\\('"
          + " then 'spring'"
          + " else 'other' end";

  private final Connection connection;
  private final boolean statementsAvailable;
  private final String statementsNote;

  /** Calls, execution time (ms) and rows of one category. */
  record Group(long calls, double ms, long rows) {
    static final Group NONE = new Group(0, 0, 0);
  }

  /** One normalised statement. */
  record Top(String category, long calls, double ms, long rows, String query) {}

  /** Cumulative counters of this database. */
  record Counters(long commits, long rollbacks, long bookRowsWritten, long usersUpdated) {
    Counters minus(Counters before) {
      return new Counters(
          commits - before.commits,
          rollbacks - before.rollbacks,
          bookRowsWritten - before.bookRowsWritten,
          usersUpdated - before.usersUpdated);
    }
  }

  W2Stats(Connection connection) {
    this.connection = connection;
    String note;
    boolean available;
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "select count(*) from pg_extension where extname = 'pg_stat_statements'")) {
      rs.next();
      if (rs.getLong(1) == 0) {
        available = false;
        note = "extension pg_stat_statements not created in this database";
      } else {
        try (Statement probe = connection.createStatement()) {
          probe.executeQuery("select count(*) from pg_stat_statements").close();
          resetStatementsOrThrow();
          available = true;
          note = "pg_stat_statements: on (reset for this database before each measured run)";
        } catch (SQLException e) {
          available = false;
          note = "pg_stat_statements unusable: " + e.getMessage().lines().findFirst().orElse("");
        }
      }
    } catch (SQLException e) {
      available = false;
      note = "pg_stat_statements unusable: " + e.getMessage();
    }
    this.statementsAvailable = available;
    this.statementsNote = note;
  }

  boolean statementsAvailable() {
    return statementsAvailable;
  }

  String statementsNote() {
    return statementsNote;
  }

  /** Forgets this database's statement statistics (no effect when unavailable). */
  void resetStatements() throws SQLException {
    if (statementsAvailable) {
      resetStatementsOrThrow();
    }
  }

  private void resetStatementsOrThrow() throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement
          .executeQuery(
              "select pg_stat_statements_reset(0, (select oid from pg_database"
                  + " where datname = current_database()), 0)")
          .close();
    }
  }

  /** Statement statistics since the last reset, per category (empty when unavailable). */
  Map<String, Group> statements() throws SQLException {
    Map<String, Group> groups = new LinkedHashMap<>();
    for (String c : CATEGORIES) {
      groups.put(c, Group.NONE);
    }
    if (!statementsAvailable) {
      return groups;
    }
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "select "
                    + CATEGORY
                    + " as category, sum(calls), sum(total_exec_time), sum(rows)"
                    + " from pg_stat_statements"
                    + " where dbid = (select oid from pg_database where datname = current_database())"
                    + " group by 1")) {
      while (rs.next()) {
        groups.put(rs.getString(1), new Group(rs.getLong(2), rs.getDouble(3), rs.getLong(4)));
      }
    }
    return groups;
  }

  /** The {@code n} statements of the given categories with the most calls, then time. */
  List<Top> top(int n, List<String> categories) throws SQLException {
    List<Top> top = new ArrayList<>();
    if (!statementsAvailable || n <= 0) {
      return top;
    }
    try (PreparedStatement statement =
        connection.prepareStatement(
            "select category, calls, ms, rows, query from ("
                + " select "
                + CATEGORY
                + " as category, calls, total_exec_time as ms, rows,"
                + " regexp_replace(query, '\\s+', ' ', 'g') as query"
                + " from pg_stat_statements"
                + " where dbid = (select oid from pg_database where datname = current_database())"
                + ") s where category = any (?) order by calls desc, ms desc limit ?")) {
      statement.setArray(1, connection.createArrayOf("text", categories.toArray()));
      statement.setInt(2, n);
      try (ResultSet rs = statement.executeQuery()) {
        while (rs.next()) {
          top.add(
              new Top(
                  rs.getString(1), rs.getLong(2), rs.getDouble(3), rs.getLong(4), rs.getString(5)));
        }
      }
    }
    return top;
  }

  /** This database's cumulative counters (as flushed so far). */
  Counters counters() throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "select d.xact_commit, d.xact_rollback,"
                    + " (select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)"
                    + " from pg_stat_user_tables where relname not in "
                    + DATA_TABLES
                    + "), (select coalesce(sum(n_tup_upd), 0)"
                    + " from pg_stat_user_tables where relname in "
                    + DATA_TABLES
                    + ")"
                    + " from pg_stat_database d where d.datname = current_database()")) {
      rs.next();
      return new Counters(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
    }
  }
}
