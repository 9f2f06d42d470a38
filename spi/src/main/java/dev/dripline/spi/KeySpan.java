package dev.dripline.spi;

import java.util.Objects;

/**
 * An inclusive range of keys of any {@link KeyType}: one batch of a keyed definition. ({@link
 * KeyRange} is the same for {@code long} keys.) Its ends are in the order the keys were listed in,
 * which for text keys a table scan lists in the column's collation, not necessarily {@link
 * Key#compareTo}'s.
 *
 * @param startKey first key, inclusive
 * @param endKey last key, inclusive
 */
public record KeySpan(Key startKey, Key endKey) {
  public KeySpan {
    Objects.requireNonNull(startKey, "startKey");
    Objects.requireNonNull(endKey, "endKey");
  }

  /**
   * Whether {@code key} lies in the span in {@link Key#compareTo}'s order: exact for every type but
   * text in a collation other than "C" (docs/keys.md).
   */
  public boolean contains(Key key) {
    return key.compareTo(startKey) >= 0 && key.compareTo(endKey) <= 0;
  }

  @Override
  public String toString() {
    return "[" + startKey + " .. " + endKey + "]";
  }
}
