package dev.dripline.workflows.run;

import java.util.List;

/**
 * Batches claimed, now enqueued and holding a slot, in number order.
 *
 * @param batches the batches claimed
 * @param slotsFull the claim took fewer than asked because batches the caller does not hold (of a
 *     lost execution, or attempts not yet stopped) fill the run's slots in PostgreSQL: pending
 *     batches may remain, to claim once those slots free
 */
public record ClaimResult(List<BatchRef> batches, boolean slotsFull) {
  public ClaimResult(List<BatchRef> batches) {
    this(batches, false);
  }
}
