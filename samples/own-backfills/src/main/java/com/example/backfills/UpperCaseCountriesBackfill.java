package com.example.backfills;

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
import java.util.List;

/**
 * {@code sample.upper-case-countries}: upper-cases and trims {@code sample_customers.country}. A
 * table definition: it declares the table, its key and the rows in scope (countries not upper-case
 * yet), and Dripline lists the keys and cuts the batches; each batch updates its rows still in
 * scope, so a batch run twice changes nothing the second time.
 *
 * <p>Plain Java against {@code dripline-spi}: the worker finds it through {@code
 * META-INF/services/dev.dripline.spi.BackfillDefinition}.
 */
public class UpperCaseCountriesBackfill implements TableBackfillDefinition {
  public static final String NAME = "sample.upper-case-countries";

  static final String UPDATE = "update sample_customers set country = upper(trim(country)) where ";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Upper-cases and trims sample_customers.country where it is not upper-case yet.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of();
  }

  @Override
  public int defaultBatchSize() {
    return 100;
  }

  @Override
  public String table() {
    return "sample_customers";
  }

  @Override
  public KeySchema key() {
    return KeySchema.of(KeyColumn.of("id", KeyType.BIGINT));
  }

  @Override
  public TableScope scope(BackfillOptions options) {
    return TableScope.of("country <> upper(trim(country))");
  }

  @Override
  public void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws Exception {
    try (PreparedStatement update = transaction.prepareStatement(UPDATE + batch.where())) {
      batch.bind(update, 1);
      update.executeUpdate();
    }
  }
}
