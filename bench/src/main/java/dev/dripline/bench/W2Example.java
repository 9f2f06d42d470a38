package dev.dripline.bench;

import dev.dripline.examples.ExampleSeeder;
import dev.dripline.examples.NormalizeEmailsBackfill;
import dev.dripline.examples.NormalizeHandlesBackfill;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyJdbc;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.TableBatch;
import dev.dripline.spi.TableScope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The example W2 runs ({@code --w2-example}), and the statements every system runs for it: the same
 * text Dripline runs, so the baselines do what Dripline's batches do.
 *
 * <ul>
 *   <li>{@link #EMAILS}, {@code example.normalize-emails} over {@code example_users} (bigint ids
 *       1..N): its own {@link NormalizeEmailsBackfill#KEYS_AFTER_SQL} and {@link
 *       NormalizeEmailsBackfill#BATCH_SQL};
 *   <li>{@link #HANDLES}, {@code example.normalize-handles} over {@code example_accounts} (uuid ids
 *       spread over the key space, K3): the key scan Dripline's engine writes for a table
 *       definition ({@code KeyedBackfill.TableKeys.scanSql}: no row comparison on the first page)
 *       and the example's UPDATE over {@link TableBatch#where()}.
 * </ul>
 */
enum W2Example {
  EMAILS(NormalizeEmailsBackfill.NAME, "example_users", "email") {
    @Override
    List<Key> keysAfter(Connection connection, Key after, int limit) throws SQLException {
      try (PreparedStatement statement =
          connection.prepareStatement(NormalizeEmailsBackfill.KEYS_AFTER_SQL)) {
        statement.setLong(1, after == null ? Long.MIN_VALUE : after.getLong(0));
        statement.setInt(2, limit);
        List<Key> keys = new ArrayList<>(limit);
        try (ResultSet rows = statement.executeQuery()) {
          while (rows.next()) {
            keys.add(Key.ofLong(rows.getLong(1)));
          }
        }
        return keys;
      }
    }

    @Override
    long process(Connection connection, W2Ranges.Range range) throws SQLException {
      try (PreparedStatement statement =
          connection.prepareStatement(NormalizeEmailsBackfill.BATCH_SQL)) {
        statement.setLong(1, range.start().getLong(0));
        statement.setLong(2, range.end().getLong(0));
        return statement.executeUpdate();
      }
    }

    @Override
    long seed(ExampleSeeder seeder, long rows) throws SQLException {
      return seeder.ensureUsers(rows);
    }

    @Override
    String wrongRowsSql() {
      return "select count(*), count(*) filter (where email <> 'user' || id || '@example.com')"
          + " from example_users";
    }
  },

  HANDLES(NormalizeHandlesBackfill.NAME, "example_accounts", "handle") {
    private static final String SCAN = "select id from example_accounts where ";
    private static final String ORDER = " order by id limit ?";
    private static final TableScope SCOPE = TableScope.of(NormalizeHandlesBackfill.SCOPE);

    @Override
    List<Key> keysAfter(Connection connection, Key after, int limit) throws SQLException {
      String scope = "(" + SCOPE.predicate() + ")";
      String sql = SCAN + (after == null ? scope : "(id) > (?) and " + scope) + ORDER;
      try (PreparedStatement statement = connection.prepareStatement(sql)) {
        int index = after == null ? 1 : KeyJdbc.bind(statement, 1, after);
        statement.setInt(index, limit);
        List<Key> keys = new ArrayList<>(limit);
        try (ResultSet rows = statement.executeQuery()) {
          while (rows.next()) {
            keys.add(KeyJdbc.read(rows, 1, NormalizeHandlesBackfill.KEY));
          }
        }
        return keys;
      }
    }

    @Override
    long process(Connection connection, W2Ranges.Range range) throws SQLException {
      TableBatch batch =
          new TableBatch(
              NormalizeHandlesBackfill.KEY, new KeySpan(range.start(), range.end()), SCOPE);
      try (PreparedStatement statement =
          connection.prepareStatement(NormalizeHandlesBackfill.UPDATE + batch.where())) {
        batch.bind(statement, 1);
        return statement.executeUpdate();
      }
    }

    @Override
    long seed(ExampleSeeder seeder, long rows) throws SQLException {
      return seeder.ensureAccounts(rows);
    }

    @Override
    String wrongRowsSql() {
      return "select count(*), count(*) filter (where handle !~ '^handle[0-9]+$')"
          + " from example_accounts";
    }
  };

  /** The backfill Dripline runs. */
  final String backfill;

  /** The table the batches update and the reset refills. */
  final String table;

  /** Its column the example normalises ({@code lower(trim(column))}). */
  final String column;

  W2Example(String backfill, String table, String column) {
    this.backfill = backfill;
    this.table = table;
    this.column = column;
  }

  /** {@code --w2-example}: {@code emails} or {@code handles}. */
  static W2Example named(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "emails" -> EMAILS;
      case "handles" -> HANDLES;
      default ->
          throw new IllegalArgumentException("--w2-example takes emails or handles, not " + name);
    };
  }

  /** Up to {@code limit} keys in scope after {@code after} (from the start when null), in order. */
  abstract List<Key> keysAfter(Connection connection, Key after, int limit) throws SQLException;

  /** One batch: the example's UPDATE over the range, in the connection's transaction mode. */
  abstract long process(Connection connection, W2Ranges.Range range) throws SQLException;

  /** Fills the (truncated) table with {@code rows} rows, nine in ten not normalised. */
  abstract long seed(ExampleSeeder seeder, long rows) throws SQLException;

  /** {@code count(*)} and how many rows do not hold their normalised value. */
  abstract String wrongRowsSql();

  /** How many rows are in scope (not normalised yet). */
  String scopeSql() {
    return "select count(*) from " + table + " where " + column + " <> lower(trim(" + column + "))";
  }
}
