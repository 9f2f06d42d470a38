package dev.dripline.workflows.run;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The slots one execution of a run's workflow holds: which batch activity holds which lane (1 to
 * the cap), and the completions not yet handled.
 *
 * <p>A batch holds its slot from when its activity is started until its completion is handled — not
 * merely received — so the workflow's loop never starts more than {@link #free()} allows while
 * outcomes are still to be recorded. Lowering the cap takes no slot away; it only leaves none free
 * until fewer than the new cap are held. A lane is the lowest one no batch holds, so lanes stay
 * within 1 to the cap as long as the cap is kept.
 *
 * <p>This is the workflow's cache of the slots PostgreSQL records, not the guard of the cap: {@link
 * #take} holds what a claim returned even beyond the cap (a repeated claim is answered with the
 * batches its token already holds there), and a chained batch handed back keeps its chain's lane.
 *
 * <p>Workflow state: deterministic, no clock and no Temporal calls; the workflow feeds it.
 */
final class SlotBook {
  /**
   * A batch activity's outcome, waiting to be handled in the workflow's loop.
   *
   * @param batch the batch the activity was started with
   * @param lane the lane it held
   * @param result its result, if it completed
   * @param failure why it failed, if it did
   */
  record Completion(BatchRef batch, int lane, BatchResult result, RuntimeException failure) {}

  /** An outcome as received, before it is handled. */
  private record Outcome(BatchRef batch, BatchResult result, RuntimeException failure) {}

  /** Lane of each batch holding a slot, by batch number. */
  private final Map<Integer, Integer> laneOf = new LinkedHashMap<>();

  private final Deque<Outcome> outcomes = new ArrayDeque<>();
  private int cap = 1;

  /** The effective cap the slots are counted against. */
  int cap() {
    return cap;
  }

  /** Sets the effective cap; slots held above it are kept until their batches complete. */
  void setCap(int cap) {
    this.cap = cap;
  }

  /** Slots held, including those whose completion is not yet handled. */
  int held() {
    return laneOf.size();
  }

  /** Whether no slot is held. */
  boolean isEmpty() {
    return laneOf.isEmpty();
  }

  /** Slots that may be taken now: the cap less those held, never negative. */
  int free() {
    return Math.max(0, cap - laneOf.size());
  }

  /**
   * Holds a slot for {@code batch} in the lowest lane no batch holds.
   *
   * @return the lane
   */
  int take(BatchRef batch) {
    return take(batch, lowestFreeLane());
  }

  /**
   * Holds a slot for {@code batch} in {@code lane}: a chained batch handed back goes on in the lane
   * its chain held.
   *
   * @return the lane
   */
  int take(BatchRef batch, int lane) {
    laneOf.put(batch.number(), lane);
    return lane;
  }

  /**
   * Receives the outcome of {@code batch}'s activity; its slot stays held until {@link
   * #nextCompletion} hands the outcome over.
   */
  void completed(BatchRef batch, BatchResult result, RuntimeException failure) {
    outcomes.add(new Outcome(batch, result, failure));
  }

  /** Whether a completion waits to be handled. */
  boolean hasCompletions() {
    return !outcomes.isEmpty();
  }

  /**
   * The oldest completion not yet handled, in the order they were received; its slot is free from
   * now on.
   *
   * @throws java.util.NoSuchElementException if none waits
   */
  Completion nextCompletion() {
    Outcome outcome = outcomes.remove();
    int lane = laneOf.remove(outcome.batch().number());
    return new Completion(outcome.batch(), lane, outcome.result(), outcome.failure());
  }

  private int lowestFreeLane() {
    int lane = 1;
    while (laneOf.containsValue(lane)) {
      lane++;
    }
    return lane;
  }
}
