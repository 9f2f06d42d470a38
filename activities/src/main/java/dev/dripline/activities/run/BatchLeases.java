package dev.dripline.activities.run;

import dev.dripline.store.run.BatchRepository;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The statements by which an attempt takes, keeps and gives back batches under its lease (spec
 * R5b): a batch runs under one holder at a time, whose lease its ticker renews; another attempt
 * takes the batch over only once that lease has run out. Each is a single {@link BatchRepository}
 * statement in auto-commit, with no outage handling of its own ({@link OutageWait} adds it).
 */
@Singleton
class BatchLeases {
  private static final Logger LOG = LoggerFactory.getLogger(BatchLeases.class);

  /** No batch's number (batches are numbered from 1): {@link #releaseHeld} keeps none. */
  static final int NO_BATCH = 0;

  private final BatchRepository batches;

  BatchLeases(BatchRepository batches) {
    this.batches = batches;
  }

  /**
   * Marks the head batch running under {@code attempt}: from {@code enqueued}, or from {@code
   * running} once the lease of the attempt that held it has run out; null when it is held by a live
   * lease or holds no slot.
   */
  StartedBatch startHead(long runId, int number, BatchAttempt attempt) {
    return StartedBatch.of(
        batches
            .startHead(runId, number, attempt.holder(), attempt.lease().toMillis())
            .orElse(null));
  }

  /**
   * The chained batch the chain headed by {@code headNumber} holds, taken under this attempt's
   * lease; or null. {@code newAttempt}: an earlier attempt of this activity held it (and died), so
   * this is a new attempt at the batch and is counted; false when this same attempt resumes it
   * after losing PostgreSQL, which is not a new attempt (as for the head batch, which an outage
   * reruns in the same attempt).
   */
  StartedBatch resumeHeld(long runId, int headNumber, boolean newAttempt, BatchAttempt attempt) {
    return StartedBatch.of(
        batches
            .resumeChain(
                runId, headNumber, attempt.holder(), attempt.lease().toMillis(), newAttempt)
            .orElse(null));
  }

  /**
   * Takes the run's lowest pending batch into the chain (pending → running in one step), if the run
   * is running, not stopping, its cap covers {@code lane} and its slot holders are fewer than its
   * cap; null otherwise ({@link BatchRepository#claimNext}). It adds a slot holder, so it counts
   * them under the run row's lock, as every claim that adds one does (R5b): one call.
   */
  StartedBatch claimNext(long runId, int headNumber, int lane, BatchAttempt attempt) {
    return StartedBatch.of(
        batches
            .claimNext(runId, headNumber, lane, attempt.holder(), attempt.lease().toMillis())
            .orElse(null));
  }

  /**
   * Whether batch {@code number} is running under another holder whose lease is live: an attempt
   * that has not stopped yet, which this one may not replace.
   */
  boolean heldByAnotherLive(long runId, int number, BatchAttempt attempt) {
    return RunSlots.heldLive(batches, runId, number, attempt.holder());
  }

  /** {@link #heldByAnotherLive} for the batch the chain headed by {@code headNumber} holds. */
  boolean chainHeldByAnotherLive(long runId, int headNumber, BatchAttempt attempt) {
    return RunSlots.chainHeldLive(batches, runId, headNumber, attempt.holder());
  }

  /** Renews the lease of batch {@code number}: 1 if it is still this attempt's, else 0. */
  int renew(long runId, int number, BatchAttempt attempt) {
    return batches.renewLease(runId, number, attempt.holder(), attempt.lease().toMillis());
  }

  /**
   * Renews the lease of the batch {@code attempt} holds, if any; counts for the attempt only if it
   * still holds that batch. Called by whoever keeps the attempt alive (a ticker), never by the
   * attempt's own thread.
   */
  void renewHeld(long runId, BatchAttempt attempt) {
    Integer number = attempt.held();
    if (number == null) {
      return;
    }
    long sentAt = System.nanoTime();
    if (renew(runId, number, attempt) == 1) {
      attempt.confirmed(number, sentAt);
    }
  }

  /** Best effort: puts back to pending any batch this chain holds other than {@code except}. */
  void releaseHeld(long runId, int headNumber, int except, BatchAttempt attempt) {
    attempt.release();
    try {
      int released = batches.releaseHeldByChain(runId, headNumber, except, attempt.holder());
      if (released > 0) {
        LOG.info(
            "Run {}: chain of batch {} released {} batch(es) it held back to pending",
            runId,
            headNumber,
            released);
      }
    } catch (RuntimeException e) {
      LOG.warn("Run {}: could not release the batches chain {} held", runId, headNumber, e);
    }
  }
}
