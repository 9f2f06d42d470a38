package dev.dripline.standalone;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Direct SQL on the test database, to check what Dripline recorded independently of its API. */
final class TestDb {
  static final String URL =
      System.getenv()
          .getOrDefault(
              "DRIPLINE_TEST_DB_URL",
              "jdbc:postgresql://127.0.0.1:5432/dripline_test?sslmode=disable");

  private TestDb() {}

  static long queryLong(String sql, Object... args) {
    try (Connection c = DriverManager.getConnection(URL, "dripline", "dripline");
        PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of the first row as text, or null without a row. */
  static String queryText(String sql) {
    try (Connection c = DriverManager.getConnection(URL, "dripline", "dripline");
        PreparedStatement s = c.prepareStatement(sql);
        ResultSet rs = s.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of every row, as longs, in the query's order. */
  static List<Long> queryLongs(String sql, Object... args) {
    try (Connection c = DriverManager.getConnection(URL, "dripline", "dripline");
        PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      List<Long> values = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          values.add(rs.getLong(1));
        }
      }
      return values;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static void execute(String sql, Object... args) {
    try (Connection c = DriverManager.getConnection(URL, "dripline", "dripline");
        PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      s.execute();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
