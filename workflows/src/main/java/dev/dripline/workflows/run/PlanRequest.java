package dev.dripline.workflows.run;

/**
 * Plan up to {@code maxBatches} more batches of the run.
 *
 * @param runId the run
 * @param maxBatches most batches to plan in this call
 * @param keepPending if positive, plan only while fewer batches than this are pending, and report
 *     how many are (up to this number)
 */
public record PlanRequest(long runId, int maxBatches, int keepPending) {
  /** Plan a page, however many batches are pending. */
  public PlanRequest(long runId, int maxBatches) {
    this(runId, maxBatches, 0);
  }
}
