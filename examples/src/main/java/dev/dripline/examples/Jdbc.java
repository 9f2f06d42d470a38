package dev.dripline.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** The examples' plain JDBC: one statement on a connection of their own, closed after it. */
final class Jdbc {
  private Jdbc() {}

  /** The first column of every row {@code sql} returns, as longs. */
  static List<Long> longs(DataSource dataSource, String sql, Object... parameters)
      throws SQLException {
    List<Long> values = new ArrayList<>();
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = prepare(connection, sql, parameters);
        ResultSet rows = statement.executeQuery()) {
      while (rows.next()) {
        values.add(rows.getLong(1));
      }
    }
    return values;
  }

  /** The first column of every row {@code sql} returns, as strings. */
  static List<String> strings(DataSource dataSource, String sql, Object... parameters)
      throws SQLException {
    List<String> values = new ArrayList<>();
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = prepare(connection, sql, parameters);
        ResultSet rows = statement.executeQuery()) {
      while (rows.next()) {
        values.add(rows.getString(1));
      }
    }
    return values;
  }

  /** Whether {@code sql} returns a row. */
  static boolean exists(DataSource dataSource, String sql, Object... parameters)
      throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = prepare(connection, sql, parameters);
        ResultSet rows = statement.executeQuery()) {
      return rows.next();
    }
  }

  private static PreparedStatement prepare(Connection connection, String sql, Object... parameters)
      throws SQLException {
    PreparedStatement statement = connection.prepareStatement(sql);
    try {
      for (int i = 0; i < parameters.length; i++) {
        statement.setObject(i + 1, parameters[i]);
      }
    } catch (SQLException e) {
      statement.close();
      throw e;
    }
    return statement;
  }
}
