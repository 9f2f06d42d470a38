package dev.dripline.run;

/**
 * @param outcome what happened
 * @param size keys of the batch counted as processed (0 when skipped)
 */
public record BatchResult(BatchOutcome outcome, int size) {}
