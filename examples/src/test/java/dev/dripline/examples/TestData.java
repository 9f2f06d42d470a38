package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.store.db.Database;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/** Small helpers for the examples' ITs: unique ids and tags, and terse SQL. */
final class TestData {
  private TestData() {}

  /** A run id no real run and no other test uses, so tests are repeatable on one database. */
  static long uniqueRunId() {
    return ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50);
  }

  static String uniqueTag(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  /** The context of run {@code runId} with options {@code keyValues}, on {@code database}. */
  static BackfillContext context(
      Database database, long runId, String backfill, Object... keyValues) {
    Map<String, Object> values = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      values.put((String) keyValues[i], keyValues[i + 1]);
    }
    return new BackfillContext(
        runId, backfill, new BackfillOptions(values), null, database.dataSource());
  }

  static int update(Database database, String sql, Object... parameters) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, parameters);
            return statement.executeUpdate();
          }
        });
  }

  /** The rows of a query, each as a list of column values. */
  static List<List<Object>> query(Database database, String sql, Object... parameters) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, parameters);
            List<List<Object>> result = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
              int columns = rows.getMetaData().getColumnCount();
              while (rows.next()) {
                List<Object> row = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                  row.add(rows.getObject(i));
                }
                result.add(row);
              }
            }
            return result;
          }
        });
  }

  static long queryLong(Database database, String sql, Object... parameters) {
    return ((Number) query(database, sql, parameters).get(0).get(0)).longValue();
  }

  private static void bind(PreparedStatement statement, Object... parameters)
      throws java.sql.SQLException {
    for (int i = 0; i < parameters.length; i++) {
      statement.setObject(i + 1, parameters[i]);
    }
  }
}
