package dev.dripline.workflows.run;

/**
 * One batch to process, with what the activity needs to find the definition and the run.
 *
 * @param runId the run
 * @param backfill the definition's name
 * @param batch the batch the workflow claimed for this activity (its head)
 * @param lane the slot this activity holds, 1 to the cap (0: none given, no chaining)
 * @param chainMillis for how long, from its start, the activity may go on with further pending
 *     batches of the run after its head, one at a time in the same slot (0: only the head)
 * @param groupEnd with groups, the number of the group's last batch: the activity goes on only with
 *     pending batches numbered up to it, and does not wait for planning; null: a chain, which takes
 *     the run's lowest pending batch
 */
public record BatchWork(
    long runId, String backfill, BatchRef batch, int lane, long chainMillis, Integer groupEnd) {
  public BatchWork(long runId, String backfill, BatchRef batch, int lane, long chainMillis) {
    this(runId, backfill, batch, lane, chainMillis, null);
  }

  /** Just the head batch, no chaining. */
  public BatchWork(long runId, String backfill, BatchRef batch) {
    this(runId, backfill, batch, 0, 0);
  }
}
