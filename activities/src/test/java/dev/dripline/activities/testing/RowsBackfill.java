package dev.dripline.activities.testing;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.TransactionalBackfillDefinition;
import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Consumer;

/**
 * Test-only transactional definition: keys {@code 1..items}; a batch writes one row per key into
 * {@code test_rows} in Dripline's transaction, then fails if it holds {@code failKey}, so tests can
 * see which batches' writes committed.
 */
@Singleton
public class RowsBackfill implements TransactionalBackfillDefinition {
  public static final String NAME = "test.rows";

  private final Database database;
  private volatile Consumer<KeyRange> afterWrites = range -> {};

  public RowsBackfill(Database database) {
    this.database = database;
    database.withConnection(
        connection -> {
          try (PreparedStatement create =
              connection.prepareStatement(
                  "create table if not exists test_rows (run_id bigint not null, key bigint not null)")) {
            return create.executeUpdate();
          }
        });
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Rows 1..items written in Dripline's transaction, for tests.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("items", OptionType.INTEGER, "how many keys").atLeast(0),
        OptionSpec.optional("failKey", OptionType.INTEGER, "a batch holding it fails"));
  }

  @Override
  public int defaultBatchSize() {
    return 10;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
    return KeysBackfill.keysUpTo(context.options().requireInteger("items"), afterKey, limit);
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range) {
    database.runInTransaction(connection -> processBatch(context, range, connection));
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range, Connection transaction)
      throws SQLException {
    try (PreparedStatement insert =
        transaction.prepareStatement(
            "insert into test_rows (run_id, key) select ?, generate_series(?::bigint, ?::bigint)")) {
      insert.setLong(1, context.runId());
      insert.setLong(2, range.startKey());
      insert.setLong(3, range.endKey());
      insert.executeUpdate();
    }
    afterWrites.accept(range);
    if (context.options().integer("failKey").filter(range::contains).isPresent()) {
      throw new IllegalStateException("disk full");
    }
  }

  /** Runs after a batch's writes, inside its transaction (e.g. to take its slot away). */
  public void afterWrites(Consumer<KeyRange> hook) {
    this.afterWrites = hook == null ? range -> {} : hook;
  }

  /** How many rows batches of {@code runId} wrote for keys {@code from..to}. */
  public long rows(long runId, long from, long to) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select count(*) from test_rows where run_id = ? and key between ? and ?")) {
            select.setLong(1, runId);
            select.setLong(2, from);
            select.setLong(3, to);
            try (var rs = select.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }
}
