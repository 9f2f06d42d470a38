package dev.dripline.bench;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.spi.TableBatch;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * {@code bench.pgbench-accounts}: rewrites {@code pgbench_accounts.filler} of every account, the
 * table pgbench's TPC-B transactions update — W6's backfill beside live traffic. A table definition
 * over {@code aid}; only the Dripline JVM the bench starts registers it, and {@code
 * pgbench_accounts} must exist (W6 makes it with {@code pgbench -i}).
 */
@Singleton
public class PgbenchAccountsBackfill implements TableBackfillDefinition {
  public static final String NAME = "bench.pgbench-accounts";

  private static final KeySchema KEY = KeySchema.of(KeyColumn.of("aid", KeyType.INTEGER));

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Benchmark only: rewrites pgbench_accounts.filler (W6, beside pgbench).";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of();
  }

  @Override
  public int defaultBatchSize() {
    return 1000;
  }

  @Override
  public String table() {
    return "pgbench_accounts";
  }

  @Override
  public KeySchema key() {
    return KEY;
  }

  @Override
  public void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws SQLException {
    try (PreparedStatement update =
        transaction.prepareStatement(
            "update pgbench_accounts set filler = md5(aid::text) where " + batch.where())) {
      batch.bind(update, 1);
      update.executeUpdate();
    }
  }
}
