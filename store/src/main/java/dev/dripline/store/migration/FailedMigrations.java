package dev.dripline.store.migration;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.configuration.Configuration;

/**
 * Forgets the failed entries of Flyway's schema history before a migration is tried again. A
 * non-transactional migration (one that builds an index {@code CONCURRENTLY}) runs outside a
 * transaction, so when it fails Flyway 10 records it as failed ({@code success = false}, {@code
 * DbMigrate.applyMigrations}) and refuses every later {@code migrate} until the entry is removed. A
 * failure that passes (a lock timeout, a deadlock, a lost connection) leaves nothing to repair by
 * hand: the migration drops what it half built before building it again (CONTRIBUTING.md,
 * "Migrations"), so its entry can go. Flyway's own {@code repair} would also realign the checksums
 * of edited migrations, which Dripline refuses ({@code MigrationsTest}).
 */
final class FailedMigrations {
  private static final String IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*";

  private FailedMigrations() {}

  /** Deletes the failed entries of the schema history of {@code configuration} on {@code db}. */
  static int forget(DataSource db, Configuration configuration) {
    String table = configuration.getTable();
    String schema = configuration.getDefaultSchema();
    if (!table.matches(IDENTIFIER) || (schema != null && !schema.matches(IDENTIFIER))) {
      throw new FlywayException("Unexpected schema history table name: " + schema + "." + table);
    }
    String qualified = schema == null ? table : schema + "." + table;
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      boolean exists;
      try (var rs = s.executeQuery("select to_regclass('" + qualified + "') is not null")) {
        exists = rs.next() && rs.getBoolean(1);
      }
      return exists ? s.executeUpdate("delete from " + qualified + " where not success") : 0;
    } catch (SQLException e) {
      throw new FlywayException("Could not forget failed migrations: " + e.getMessage(), e);
    }
  }
}
