package dev.dripline.workflows.run;

/**
 * What one batch activity did: its head batch, and the batches it chained after it.
 *
 * @param outcome what happened to the head batch
 * @param size keys of the head batch counted as processed (0 when skipped)
 * @param chainedBatches further batches this activity completed in the same slot
 * @param chainedKeys keys of those batches
 * @param handoff a chained batch whose attempt failed: it still holds the slot, and the workflow
 *     carries on with it as with any claimed batch (null if none)
 * @param handoffError the failed attempt's error
 * @param handoffPermanent the batch fails now, without retries: the failure was declared permanent,
 *     or it was the batch's last failed attempt the policy allows
 */
public record BatchResult(
    BatchOutcome outcome,
    int size,
    int chainedBatches,
    long chainedKeys,
    BatchRef handoff,
    String handoffError,
    boolean handoffPermanent) {
  /** The head batch only. */
  public BatchResult(BatchOutcome outcome, int size) {
    this(outcome, size, 0, 0, null, null, false);
  }
}
