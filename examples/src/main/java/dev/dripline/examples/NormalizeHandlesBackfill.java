package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.spi.TableBatch;
import dev.dripline.spi.TableScope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * {@code example.normalize-handles}: lower-cases and trims {@code example_accounts.handle}, a table
 * keyed by a UUID (K6 in docs/spec.md). A table definition (K3): it declares the table, its key and
 * its scope — handles not yet normalised — and the engine lists the keys; each batch updates the
 * rows of its span still in scope, so a batch run twice changes nothing the second time.
 */
public class NormalizeHandlesBackfill implements TableBackfillDefinition {
  public static final String NAME = "example.normalize-handles";

  /** The rows in scope: handles not normalised yet. */
  public static final String SCOPE = "handle <> lower(trim(handle))";

  /** The key: {@code id uuid}. */
  public static final KeySchema KEY = KeySchema.of(KeyColumn.of("id", KeyType.UUID));

  /** A batch's statement, before its {@link TableBatch#where()}. */
  public static final String UPDATE =
      "update example_accounts set handle = lower(trim(handle)) where ";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Lower-cases and trims example_accounts.handle (keyed by uuid) where not normalised.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public int defaultBatchSize() {
    return 1000;
  }

  @Override
  public String table() {
    return "example_accounts";
  }

  @Override
  public KeySchema key() {
    return KEY;
  }

  @Override
  public void beforePlanning(BackfillContext context) throws SQLException {
    FaultInjection.checkPlan(context);
  }

  @Override
  public TableScope scope(BackfillOptions options) {
    return TableScope.of(SCOPE);
  }

  @Override
  public void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws SQLException {
    FaultInjection.checkBatch(context, KEY, batch.span());
    try (PreparedStatement update = transaction.prepareStatement(UPDATE + batch.where())) {
      batch.bind(update, 1);
      update.executeUpdate();
    }
  }
}
