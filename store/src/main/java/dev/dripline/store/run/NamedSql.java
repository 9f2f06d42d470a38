package dev.dripline.store.run;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A repository's {@code @Query} text run on a connection of the caller's, for the one thing
 * Micronaut Data cannot do: send a statement and the COMMIT behind it in one round trip. Named
 * parameters ({@code :runId}) become positional, bound by name.
 */
final class NamedSql {
  private static final Pattern PARAMETER = Pattern.compile(":([A-Za-z][A-Za-z0-9]*)");

  private NamedSql() {}

  /**
   * Runs {@code sql} (a query) and then {@code commit} on {@code transaction}, in one round trip;
   * the query's rows. A failure of the query aborts the transaction before the commit runs.
   */
  static ResultSet executeAndCommit(Connection transaction, String sql, Map<String, Object> values)
      throws SQLException {
    List<String> names = new ArrayList<>();
    Matcher matcher = PARAMETER.matcher(sql);
    StringBuilder positional = new StringBuilder();
    while (matcher.find()) {
      names.add(matcher.group(1));
      matcher.appendReplacement(positional, "?");
    }
    matcher.appendTail(positional);
    PreparedStatement statement = transaction.prepareStatement(positional + "; commit");
    try {
      for (int i = 0; i < names.size(); i++) {
        Object value = values.get(names.get(i));
        if (value == null) {
          throw new IllegalArgumentException("no value for :" + names.get(i));
        }
        statement.setObject(i + 1, value);
      }
      statement.execute();
      ResultSet rows = statement.getResultSet();
      statement.closeOnCompletion();
      return rows;
    } catch (SQLException | RuntimeException e) {
      statement.close();
      throw e;
    }
  }

  static Double doubleOrNull(ResultSet row, String column) throws SQLException {
    double value = row.getDouble(column);
    return row.wasNull() ? null : value;
  }
}
