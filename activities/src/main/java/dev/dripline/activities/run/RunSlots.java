package dev.dripline.activities.run;

import dev.dripline.store.run.BatchStore;
import dev.dripline.store.run.RunStore;

/**
 * The run row's lock, which every claim that adds a slot holder takes before it counts the run's
 * holders (spec R5b): the workflow's claims, a chain's claim after it held nothing, whichever
 * execution, attempt or worker makes it. A claim that replaces the holder it completes in the same
 * statement (a chain's next batch) adds none and needs no lock. The statements are {@link
 * RunStore}'s and {@link BatchStore}'s; the lock holds only inside a transaction.
 */
final class RunSlots {
  private RunSlots() {}

  /**
   * Locks the run's row until the caller's transaction ends ({@link RunStore#lockRow}); false if
   * the run does not exist.
   */
  static boolean lockRun(RunStore runs, long runId) {
    return runs.lockRow(runId).isPresent();
  }

  /**
   * Whether batch {@code number} of run {@code runId} is running under a holder other than {@code
   * exceptHolder} (null: any holder) whose lease is live: an attempt that has not stopped yet,
   * which no other may replace.
   */
  static boolean heldLive(BatchStore batches, long runId, int number, String exceptHolder) {
    return batches.heldLive(runId, number, exceptHolder) > 0;
  }

  /** {@link #heldLive} for the batch the chain headed by batch {@code headNumber} holds. */
  static boolean chainHeldLive(
      BatchStore batches, long runId, int headNumber, String exceptHolder) {
    return batches.chainHeldLive(runId, headNumber, exceptHolder) > 0;
  }

  /** Slot holders of the run, read after {@link #lockRun} in the same transaction. */
  static int holders(BatchStore batches, long runId) {
    return Math.toIntExact(batches.slotHolders(runId));
  }
}
