package dev.dripline.workflows.run;

/**
 * One batch of a run: an inclusive key range.
 *
 * @param number 1-based, in key order
 * @param startKey first key of the range, inclusive
 * @param endKey last key of the range, inclusive
 * @param size keys planned into the batch
 */
public record BatchRef(int number, long startKey, long endKey, int size) {}
