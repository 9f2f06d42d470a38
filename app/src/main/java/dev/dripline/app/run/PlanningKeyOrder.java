package dev.dripline.app.run;

import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeyType;
import dev.dripline.store.run.BatchRepository;
import java.util.Comparator;
import java.util.List;

/**
 * The order planning listed a table definition's keys in, which its batch numbers follow: {@link
 * Key#compareTo}'s, except that text compares in its column's collation, as the key scan's row
 * comparison does (docs/keys.md). PostgreSQL compares the text, in the collation the column has
 * there now; two equal strings are equal without asking.
 */
final class PlanningKeyOrder implements Comparator<Key> {
  private final BatchRepository batches;
  private final String keyTable;
  private final List<KeyColumn> columns;

  private PlanningKeyOrder(BatchRepository batches, String keyTable, List<KeyColumn> columns) {
    this.batches = batches;
    this.keyTable = keyTable;
    this.columns = columns;
  }

  /**
   * The order of {@code definition}'s keys where it is not the records' byte order: for a table
   * definition with a text key column; {@code null} for any other.
   */
  static PlanningKeyOrder of(PublishedBackfill definition, BatchRepository batches) {
    boolean text = definition.key().stream().anyMatch(column -> column.type() == KeyType.TEXT);
    return text && definition.keyTable() != null
        ? new PlanningKeyOrder(batches, definition.keyTable(), definition.key())
        : null;
  }

  @Override
  public int compare(Key a, Key b) {
    for (int i = 0; i < columns.size(); i++) {
      KeyColumn column = columns.get(i);
      int order;
      if (column.type() != KeyType.TEXT) {
        order = Key.of(a.get(i)).compareTo(Key.of(b.get(i)));
      } else if (a.getString(i).equals(b.getString(i))) {
        order = 0;
      } else {
        order = batches.keyTextOrder(a.getString(i), b.getString(i), keyTable, column.name());
      }
      if (order != 0) {
        return order;
      }
    }
    return 0;
  }
}
