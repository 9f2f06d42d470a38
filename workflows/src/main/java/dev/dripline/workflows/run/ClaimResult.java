package dev.dripline.workflows.run;

import java.util.List;

/**
 * Batches claimed, now enqueued and holding a slot, in number order.
 *
 * @param batches the batches claimed
 * @param slotsFull the claim took fewer than asked because batches the caller does not hold (of a
 *     lost execution, or attempts not yet stopped) fill the run's slots in PostgreSQL: pending
 *     batches may remain, to claim once those slots free
 * @param holds why no batch of the run may start now (a health check's name, {@code brake}, {@code
 *     pool:<name>}), empty when nothing holds it; null in results recorded before holds existed
 * @param lookAgainMillis while held, how long to wait before claiming again (about half the
 *     shortest interval of the checks that hold it); 0 when not held
 * @param throttledMillis the run's held time that has ended, as booked by the claims (0 in results
 *     recorded before it was)
 * @param heldSinceMillis when the run's current hold began (epoch millis, the database's clock);
 *     null while nothing holds it
 */
public record ClaimResult(
    List<BatchRef> batches,
    boolean slotsFull,
    List<String> holds,
    long lookAgainMillis,
    long throttledMillis,
    Long heldSinceMillis) {
  public ClaimResult(List<BatchRef> batches) {
    this(batches, false);
  }

  public ClaimResult(List<BatchRef> batches, boolean slotsFull) {
    this(batches, slotsFull, List.of(), 0, 0, null);
  }

  /** Whether a hold kept the claim from taking batches. */
  public boolean held() {
    return holds != null && !holds.isEmpty();
  }
}
