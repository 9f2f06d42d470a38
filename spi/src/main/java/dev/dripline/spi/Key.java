package dev.dripline.spi;

import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * One key: a value per key column, in the column order of the definition's {@link KeySchema}.
 * Values are of the Java types {@link KeyType} names; an {@link Instant} is kept to microseconds.
 *
 * <p>Keys compare lexicographically over the tuple, each value as PostgreSQL compares its type with
 * the "C" collation: numbers, instants and dates by value, uuids as unsigned 128-bit numbers, text
 * by Unicode code point. (A key scan in a table compares text in the column's own collation;
 * docs/keys.md says where that matters.)
 */
public final class Key implements Comparable<Key> {
  private final Object[] values;

  private Key(Object[] values) {
    this.values = values;
  }

  /**
   * A key of these values.
   *
   * @throws IllegalArgumentException when there is no value, or a value is null or of a type no key
   *     column has
   */
  public static Key of(Object... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("a key has at least one value");
    }
    Object[] copy = values.clone();
    for (int i = 0; i < copy.length; i++) {
      Object value = copy[i];
      if (value instanceof Instant instant) {
        copy[i] = instant.truncatedTo(ChronoUnit.MICROS);
      } else if (!(value instanceof Long
          || value instanceof Integer
          || value instanceof String
          || value instanceof UUID
          || value instanceof LocalDate)) {
        throw new IllegalArgumentException(
            "a key value is a Long, Integer, String, UUID, Instant or LocalDate, not "
                + (value == null ? "null" : value.getClass().getSimpleName()));
      }
    }
    return new Key(copy);
  }

  /** The key of a {@link LongKeyBackfillDefinition}: one bigint. */
  public static Key ofLong(long value) {
    return new Key(new Object[] {value});
  }

  public int size() {
    return values.length;
  }

  public Object get(int index) {
    return values[index];
  }

  public List<Object> values() {
    return List.of(values);
  }

  public long getLong(int index) {
    return ((Number) values[index]).longValue();
  }

  public int getInt(int index) {
    return Math.toIntExact(getLong(index));
  }

  public String getString(int index) {
    return (String) values[index];
  }

  public UUID getUuid(int index) {
    return (UUID) values[index];
  }

  public Instant getInstant(int index) {
    return (Instant) values[index];
  }

  public LocalDate getDate(int index) {
    return (LocalDate) values[index];
  }

  @Override
  public int compareTo(Key other) {
    int common = Math.min(values.length, other.values.length);
    for (int i = 0; i < common; i++) {
      int order = compareValues(values[i], other.values[i]);
      if (order != 0) {
        return order;
      }
    }
    return Integer.compare(values.length, other.values.length);
  }

  private static int compareValues(Object a, Object b) {
    if (a instanceof Number x && b instanceof Number y) {
      return Long.compare(x.longValue(), y.longValue());
    }
    if (a instanceof String x && b instanceof String y) {
      return compareCodePoints(x, y);
    }
    if (a instanceof UUID x && b instanceof UUID y) {
      int high = Long.compareUnsigned(x.getMostSignificantBits(), y.getMostSignificantBits());
      return high != 0
          ? high
          : Long.compareUnsigned(x.getLeastSignificantBits(), y.getLeastSignificantBits());
    }
    if (a instanceof Instant x && b instanceof Instant y) {
      return x.compareTo(y);
    }
    if (a instanceof LocalDate x && b instanceof LocalDate y) {
      return x.compareTo(y);
    }
    throw new IllegalArgumentException(
        "keys of different types cannot be compared: " + a + " and " + b);
  }

  /** Unicode code point order, which is UTF-8 byte order ({@link String#compareTo} is UTF-16's). */
  private static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int x = a.codePointAt(i);
      int y = b.codePointAt(j);
      if (x != y) {
        return Integer.compare(x, y);
      }
      i += Character.charCount(x);
      j += Character.charCount(y);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof Key key) || key.values.length != values.length) {
      return false;
    }
    for (int i = 0; i < values.length; i++) {
      Object a = values[i];
      Object b = key.values[i];
      boolean same =
          (a instanceof Number x && b instanceof Number y)
              ? x.longValue() == y.longValue()
              : a.equals(b);
      if (!same) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return Arrays.stream(values)
        .mapToInt(v -> v instanceof Number n ? Long.hashCode(n.longValue()) : v.hashCode())
        .reduce(1, (h, v) -> 31 * h + v);
  }

  /** As the API shows it: {@code 42}, {@code "abc"}, or {@code [1042, 3]} for a tuple. */
  @Override
  public String toString() {
    String shown =
        Arrays.stream(values)
            .map(v -> v instanceof Number ? v.toString() : '"' + v.toString() + '"')
            .collect(Collectors.joining(", "));
    return values.length == 1 ? shown : "[" + shown + "]";
  }
}
