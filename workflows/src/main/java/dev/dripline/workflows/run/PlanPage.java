package dev.dripline.workflows.run;

/**
 * @param batchesCreated batches saved by this call
 * @param done every key in scope (up to {@code maxRecords}) is now in a batch
 * @param totalKeys keys in scope, once done
 * @param pendingBatches batches of the run pending after this call (counted up to twice the
 *     request's {@code keepPending}), -1 if not known
 */
public record PlanPage(int batchesCreated, boolean done, Long totalKeys, int pendingBatches) {
  /** A page whose count of pending batches is not known. */
  public PlanPage(int batchesCreated, boolean done, Long totalKeys) {
    this(batchesCreated, done, totalKeys, -1);
  }
}
