package dev.dripline.spi;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.stream.Collectors;

/**
 * One batch of a {@link TableBackfillDefinition}: its key span, and the SQL that selects its rows
 * still in scope, for {@code processBatch} to put in its statements:
 *
 * <pre>{@code
 * try (PreparedStatement update = transaction.prepareStatement(
 *     "update example_order_lines set sku_normalized = upper(trim(sku)) where " + batch.where())) {
 *   batch.bind(update, 1);
 *   update.executeUpdate();
 * }
 * }</pre>
 */
public final class TableBatch {
  private final KeySchema key;
  private final KeySpan span;
  private final TableScope scope;
  private final String where;

  public TableBatch(KeySchema key, KeySpan span, TableScope scope) {
    this.key = key;
    this.span = span;
    this.scope = scope;
    String columns = columns(key);
    String marks = key.columns().stream().map(c -> "?").collect(Collectors.joining(", "));
    this.where =
        "("
            + columns
            + ") >= ("
            + marks
            + ") and ("
            + columns
            + ") <= ("
            + marks
            + ") and ("
            + scope.predicate()
            + ")";
  }

  /** The key's columns as SQL: {@code a, b}. */
  public static String columns(KeySchema key) {
    return key.columns().stream().map(KeyColumn::name).collect(Collectors.joining(", "));
  }

  /** The batch's first and last keys, inclusive. */
  public KeySpan span() {
    return span;
  }

  /** The key's columns. */
  public KeySchema key() {
    return key;
  }

  /**
   * A predicate for the batch's rows in scope: {@code (a, b) >= (?, ?) and (a, b) <= (?, ?) and
   * (<scope>)}. Bind its parameters with {@link #bind}.
   */
  public String where() {
    return where;
  }

  /**
   * Binds the parameters of {@link #where()}, the first as parameter {@code index}.
   *
   * @return the index after the last one bound
   */
  public int bind(PreparedStatement statement, int index) throws SQLException {
    index = KeyJdbc.bind(statement, index, span.startKey());
    index = KeyJdbc.bind(statement, index, span.endKey());
    for (Object parameter : scope.parameters()) {
      KeyJdbc.bind(statement, index++, parameter);
    }
    return index;
  }

  @Override
  public String toString() {
    return span.toString();
  }
}
