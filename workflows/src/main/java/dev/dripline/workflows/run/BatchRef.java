package dev.dripline.workflows.run;

/**
 * One batch of a run: an inclusive key range.
 *
 * <p>The workflow never compares keys (batch numbers are in key order); it shows them, in the batch
 * activity's summary. So they travel as the API shows them, JSON text: {@code 42}, {@code "0b6a…"},
 * {@code [1042, 3]}. Histories recorded while keys were {@code long}s carry numbers here, which
 * read as their text.
 *
 * @param number 1-based, in key order
 * @param startKey first key of the range, inclusive, as JSON text
 * @param endKey last key of the range, inclusive, as JSON text
 * @param size keys planned into the batch
 */
public record BatchRef(int number, String startKey, String endKey, int size) {
  /** A batch of {@code long} keys. */
  public BatchRef(int number, long startKey, long endKey, int size) {
    this(number, Long.toString(startKey), Long.toString(endKey), size);
  }
}
