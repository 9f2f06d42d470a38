package dev.dripline.run;

/** Plan up to {@code maxBatches} more batches of the run. */
public record PlanRequest(long runId, int maxBatches) {}
