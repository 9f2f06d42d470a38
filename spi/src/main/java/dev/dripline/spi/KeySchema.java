package dev.dripline.spi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A definition's key (K1): one column or a tuple of columns, ordered lexicographically over the
 * tuple. The catalogue shows it as {@code key: [{name, type}]}.
 *
 * @param columns at least one, names distinct
 */
public record KeySchema(List<KeyColumn> columns) {
  /** The key of {@link LongKeyBackfillDefinition}s: one bigint. */
  public static final KeySchema LONG = of(KeyColumn.of("id", KeyType.BIGINT));

  public KeySchema {
    columns = List.copyOf(columns);
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("a key has at least one column");
    }
    Set<String> names = new HashSet<>();
    for (KeyColumn column : columns) {
      if (!names.add(column.name())) {
        throw new IllegalArgumentException("key column " + column.name() + " appears twice");
      }
    }
  }

  public static KeySchema of(KeyColumn... columns) {
    return new KeySchema(List.of(columns));
  }

  /** Columns in the key. */
  public int size() {
    return columns.size();
  }

  public KeyColumn column(int index) {
    return columns.get(index);
  }

  /**
   * A key of this schema from values in column order, each conformed to its column's type ({@link
   * KeyType#conform}).
   *
   * @throws IllegalArgumentException when the count or a value's type does not match
   */
  public Key key(Object... values) {
    return Key.of(conformed(values));
  }

  /**
   * {@code key} with each value conformed to its column's type: {@code key} itself when every value
   * already is its column's Java type (planning conforms every key a definition lists, a million in
   * a large run; a {@link Key} holds its instants to microseconds already).
   *
   * @throws IllegalArgumentException when the count or a value's type does not match
   */
  public Key conform(Key key) {
    boolean fits = key.size() == columns.size();
    for (int i = 0; fits && i < columns.size(); i++) {
      fits = columns.get(i).type().javaType().isInstance(key.get(i));
    }
    return fits ? key : Key.of(conformed(key.values().toArray()));
  }

  private Object[] conformed(Object[] values) {
    if (values.length != columns.size()) {
      throw new IllegalArgumentException(
          "a key of "
              + columns.size()
              + " column(s) cannot have "
              + values.length
              + " value(s): "
              + Arrays.toString(values));
    }
    List<Object> conformed = new ArrayList<>(values.length);
    for (int i = 0; i < values.length; i++) {
      KeyColumn column = columns.get(i);
      try {
        conformed.add(column.type().conform(values[i]));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(column.name() + ": " + e.getMessage(), e);
      }
    }
    return conformed.toArray();
  }
}
