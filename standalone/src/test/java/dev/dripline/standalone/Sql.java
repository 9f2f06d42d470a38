package dev.dripline.standalone;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Direct SQL on one PostgreSQL database (the test database or the fault cluster's), to check what
 * Dripline recorded independently of its API. One connection, kept while it works (tests poll every
 * few milliseconds) and replaced after a failure, so a call made while PostgreSQL is down fails on
 * its own and the next one after the outage reconnects.
 */
final class Sql {
  private final String url;
  private Connection shared;

  Sql(String url) {
    this.url = url;
  }

  String url() {
    return url;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, "dripline", "dripline");
  }

  synchronized long queryLong(String sql, Object... args) {
    try (PreparedStatement s = prepare(connection(), sql, args);
        ResultSet rs = s.executeQuery()) {
      return rs.next() ? rs.getLong(1) : 0;
    } catch (SQLException e) {
      throw broken(e);
    }
  }

  synchronized int execute(String sql, Object... args) {
    try (PreparedStatement s = prepare(connection(), sql, args)) {
      return s.executeUpdate();
    } catch (SQLException e) {
      throw broken(e);
    }
  }

  private Connection connection() throws SQLException {
    if (shared == null) {
      shared = connect();
    }
    return shared;
  }

  private IllegalStateException broken(SQLException e) {
    try {
      if (shared != null) {
        shared.close();
      }
    } catch (SQLException closing) {
      e.addSuppressed(closing);
    }
    shared = null;
    return new IllegalStateException(e);
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... args)
      throws SQLException {
    PreparedStatement s = c.prepareStatement(sql);
    for (int i = 0; i < args.length; i++) {
      s.setObject(i + 1, args[i]);
    }
    return s;
  }
}
