package dev.dripline.workflows.run;

/**
 * @param runId the run
 * @param stopping the run was asked to stop: pending batches become stopped, the run stopped
 * @param error a run-level error (e.g. planning failed) that makes the run fail
 */
public record FinishRequest(long runId, boolean stopping, String error) {}
