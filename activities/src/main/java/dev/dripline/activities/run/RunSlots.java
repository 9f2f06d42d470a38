package dev.dripline.activities.run;

import dev.dripline.store.run.BatchRepository;

/**
 * Whether a batch is held by a live attempt (spec R5b): one whose lease has not run out, which no
 * other attempt may replace. The statements are {@link BatchRepository}'s.
 */
final class RunSlots {
  private RunSlots() {}

  /**
   * Whether batch {@code number} of run {@code runId} is running under a holder other than {@code
   * exceptHolder} (null: any holder) whose lease is live: an attempt that has not stopped yet,
   * which no other may replace.
   */
  static boolean heldLive(BatchRepository batches, long runId, int number, String exceptHolder) {
    return batches.heldLive(runId, number, exceptHolder) > 0;
  }

  /** {@link #heldLive} for the batch the chain headed by batch {@code headNumber} holds. */
  static boolean chainHeldLive(
      BatchRepository batches, long runId, int headNumber, String exceptHolder) {
    return batches.chainHeldLive(runId, headNumber, exceptHolder) > 0;
  }
}
