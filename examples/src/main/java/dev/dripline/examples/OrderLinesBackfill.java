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
 * {@code example.order-lines}: sets {@code sku_normalized = upper(trim(sku))} in {@code
 * example_order_lines}, keyed by the tuple {@code (order_id, line_no)} (K6 in docs/spec.md). A
 * batch boundary may fall inside an order: the batch's row comparison, {@code (order_id, line_no)
 * >= (?, ?) and (order_id, line_no) <= (?, ?)}, takes exactly the lines between its first and last
 * key. Like {@code example.sleep} it keeps the cap's witness ({@link ConcurrencyWitness}), so the
 * fault suite checks the cap over a tuple key too.
 */
public class OrderLinesBackfill implements TableBackfillDefinition {
  public static final String NAME = "example.order-lines";

  /** The rows in scope: lines whose normalised SKU is missing or stale. */
  public static final String SCOPE = "sku_normalized is distinct from upper(trim(sku))";

  private static final KeySchema KEY =
      KeySchema.of(
          KeyColumn.of("order_id", KeyType.BIGINT), KeyColumn.of("line_no", KeyType.INTEGER));

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Sets example_order_lines.sku_normalized = upper(trim(sku)), keyed by (order_id,"
        + " line_no).";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public int defaultBatchSize() {
    return 500;
  }

  @Override
  public String table() {
    return "example_order_lines";
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
  @SuppressWarnings("try") // the cap's witness is held for the batch
  public void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws SQLException {
    FaultInjection.checkBatch(context, KEY, batch.span());
    // The cap's witness (as example.sleep keeps it), labelled with the batch's first order.
    try (ConcurrencyWitness.Execution execution =
            new ConcurrencyWitness(context.dataSource())
                .enter(context.runId(), batch.span().startKey().getLong(0));
        PreparedStatement update =
            transaction.prepareStatement(
                "update example_order_lines set sku_normalized = upper(trim(sku)) where "
                    + batch.where())) {
      batch.bind(update, 1);
      update.executeUpdate();
    }
  }
}
