package dev.dripline.workflows.run;

/**
 * @param runId the run
 * @param requestedCap the run's requested cap
 * @param effectiveCap the cap in force
 */
public record CapRecord(long runId, int requestedCap, int effectiveCap) {}
