package dev.dripline.store.migration;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;

/**
 * Before each versioned migration, locks {@code runs} and then {@code batches} in the migration's
 * own transaction, in the order the engine takes them (a run's row first, {@code
 * RunRepository.lockRow}, then its batches). A migration altering both in the other order (V13:
 * batches, then runs) would otherwise hold {@code batches} while it waits for a transaction that
 * holds a run's row and goes on to {@code batches}: a deadlock. Waiting for {@code runs} first, the
 * migration holds nothing the engine needs, and {@code lock_timeout} bounds how long traffic queues
 * behind it.
 *
 * <p>Flyway (10.x, {@code DbMigrate.doMigrateGroup}) raises {@code beforeEachMigrate} on the
 * migration's connection inside the migration's transaction, so the locks last until it commits or
 * rolls back. A non-transactional migration (autocommit) gets no lock: one taken outside a
 * transaction ends with its statement.
 */
final class EngineLockOrder implements Callback {
  private static final String TABLES_EXIST =
      "select to_regclass('runs') is not null and to_regclass('batches') is not null";
  private static final String LOCK = "lock table runs, batches in access exclusive mode";

  @Override
  public boolean supports(Event event, Context context) {
    return event == Event.BEFORE_EACH_MIGRATE
        && context.getMigrationInfo() != null
        && context.getMigrationInfo().getVersion() != null;
  }

  @Override
  public boolean canHandleInTransaction(Event event, Context context) {
    return true;
  }

  @Override
  public void handle(Event event, Context context) {
    Connection connection = context.getConnection();
    try (Statement s = connection.createStatement()) {
      if (connection.getAutoCommit()) {
        return;
      }
      boolean exist;
      try (ResultSet rs = s.executeQuery(TABLES_EXIST)) {
        exist = rs.next() && rs.getBoolean(1);
      }
      if (exist) {
        s.execute(LOCK);
      }
    } catch (SQLException e) {
      throw new FlywayException("Could not lock runs, then batches: " + e.getMessage(), e);
    }
  }

  @Override
  public String getCallbackName() {
    return "engineLockOrder";
  }
}
