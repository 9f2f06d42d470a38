package dev.dripline.standalone.faults;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Direct SQL on the test database, so the fault tests check what Dripline recorded (and what the
 * {@code example.sleep} witness saw) independently of its API. Each call is one statement, so what
 * it reads is one consistent snapshot.
 */
final class FaultDb {
  private FaultDb() {}

  static Connection connect() throws SQLException {
    return DriverManager.getConnection(ChildJvm.databaseUrl(), "dripline", "dripline");
  }

  static long queryLong(String sql, Object... args) {
    List<Map<String, Object>> rows = query(sql, args);
    if (rows.isEmpty()) {
      return 0;
    }
    Object value = rows.get(0).values().iterator().next();
    return value == null ? 0 : ((Number) value).longValue();
  }

  /** Rows as column-name → value maps, in order. */
  static List<Map<String, Object>> query(String sql, Object... args) {
    try (Connection c = connect()) {
      return query(c, sql, args);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static List<Map<String, Object>> query(Connection c, String sql, Object... args)
      throws SQLException {
    try (PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = s.executeQuery()) {
        ResultSetMetaData meta = rs.getMetaData();
        List<Map<String, Object>> rows = new ArrayList<>();
        while (rs.next()) {
          Map<String, Object> row = new LinkedHashMap<>();
          for (int i = 1; i <= meta.getColumnCount(); i++) {
            row.put(meta.getColumnLabel(i), rs.getObject(i));
          }
          rows.add(row);
        }
        return rows;
      }
    }
  }
}
