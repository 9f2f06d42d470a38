package dev.dripline.workflows.run;

import java.util.List;

/**
 * Batches claimed, now enqueued and holding a slot, in number order.
 *
 * @param batches the batches claimed
 * @param slotsFull the claim took fewer than asked because batches the caller does not hold (of a
 *     lost execution, or attempts not yet stopped) fill the run's slots in PostgreSQL: pending
 *     batches may remain, to claim once those slots free
 * @param groupEnds with groups, for each claimed batch (its group's head) the number of its group's
 *     last batch; null without groups
 */
public record ClaimResult(List<BatchRef> batches, boolean slotsFull, List<Integer> groupEnds) {
  public ClaimResult(List<BatchRef> batches, boolean slotsFull) {
    this(batches, slotsFull, null);
  }

  public ClaimResult(List<BatchRef> batches) {
    this(batches, false);
  }

  /** The last batch of the group {@code index} heads; the head itself if not known. */
  public int groupEnd(int index) {
    return groupEnds == null || index >= groupEnds.size()
        ? batches.get(index).number()
        : groupEnds.get(index);
  }
}
