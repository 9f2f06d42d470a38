package dev.dripline.spi;

/**
 * An inclusive range of keys: one batch.
 *
 * @param startKey first key, inclusive
 * @param endKey last key, inclusive
 */
public record KeyRange(long startKey, long endKey) {
  public boolean contains(long key) {
    return key >= startKey && key <= endKey;
  }
}
