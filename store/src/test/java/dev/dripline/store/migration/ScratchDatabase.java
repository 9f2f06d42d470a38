package dev.dripline.store.migration;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;

/** A database of a migration test's own, {@code <test database>_<suffix>}, dropped and created. */
final class ScratchDatabase {
  static final String TEST_DB_URL =
      System.getenv()
          .getOrDefault(
              "DRIPLINE_TEST_DB_URL",
              "jdbc:postgresql://127.0.0.1:5432/dripline_test?sslmode=disable");
  static final String USER = System.getenv().getOrDefault("DRIPLINE_TEST_DB_USER", "dripline");
  static final String PASSWORD =
      System.getenv().getOrDefault("DRIPLINE_TEST_DB_PASSWORD", "dripline");

  final String url;

  private ScratchDatabase(String url) {
    this.url = url;
  }

  /** A fresh database migrated to {@code version} by plain Flyway (no Dripline). */
  static ScratchDatabase atVersion(String suffix, String version) throws SQLException {
    ScratchDatabase db = new ScratchDatabase(freshDatabase(suffix));
    Flyway.configure()
        .dataSource(db.url, USER, PASSWORD)
        .locations("classpath:db/migration")
        .target(version)
        .load()
        .migrate();
    return db;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, USER, PASSWORD);
  }

  /** The version of the latest successful migration. */
  String schemaVersion() {
    return queryString(
        "select version from flyway_schema_history where success"
            + " order by installed_rank desc limit 1");
  }

  long count(String sql) {
    try (Connection c = connect()) {
      return count(c, sql);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static long count(Connection c, String sql) {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  String queryString(String sql) {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String freshDatabase(String suffix) throws SQLException {
    URI test = URI.create(TEST_DB_URL.substring("jdbc:".length()));
    String name = test.getPath().substring(1) + "_" + suffix;
    if (!name.matches("[a-z_][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("database name " + name);
    }
    try (Connection c = DriverManager.getConnection(TEST_DB_URL, USER, PASSWORD);
        Statement s = c.createStatement()) {
      dropDatabase(c, name);
      s.execute("create database " + name);
    }
    return "jdbc:"
        + test.getScheme()
        + "://"
        + test.getAuthority()
        + "/"
        + name
        + (test.getQuery() == null ? "" : "?" + test.getQuery());
  }

  /**
   * Drops database {@code name} if it exists. Not {@code WITH (FORCE)}: that refuses a role without
   * {@code pg_signal_backend} as soon as an autovacuum worker is connected (a process of no role; a
   * new database's first analyze often is), while a plain {@code DROP DATABASE} stops autovacuum
   * workers itself. Sessions of this role left on it (a Dripline still closing) are terminated
   * first; a drop that still finds one ending is tried again.
   */
  private static void dropDatabase(Connection c, String name) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (PreparedStatement terminate =
          c.prepareStatement(
              "select pg_terminate_backend(pid) from pg_stat_activity"
                  + " where datname = ? and usename = current_user and pid <> pg_backend_pid()")) {
        terminate.setString(1, name);
        terminate.executeQuery().close();
      }
      try (Statement s = c.createStatement()) {
        s.execute("drop database if exists " + name);
        return;
      } catch (SQLException e) {
        // 55006: still accessed by other users (PostgreSQL waited 5 s for them to end).
        if (!"55006".equals(e.getSQLState()) || System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }
}
