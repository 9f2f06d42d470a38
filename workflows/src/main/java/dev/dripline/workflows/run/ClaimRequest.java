package dev.dripline.workflows.run;

/**
 * @param runId the run
 * @param token unique per claim of this run; a repeated call with it returns the same batches
 * @param limit most batches to claim
 */
public record ClaimRequest(long runId, long token, int limit) {}
