package dev.dripline.workflows.run;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The slots one execution of a run's workflow holds, as an immutable value of the run's state
 * ({@link RunState#slots}): which batch holds which lane (1 to the cap), and the effective cap they
 * are counted against.
 *
 * <p>A batch holds its slot from when the rules start its activity until they handle its completion
 * ({@link LoopRules#batchEnded}) — not merely until it is received — so the loop never starts more
 * than {@link #free()} allows while outcomes are still to be recorded. Lowering the cap takes no
 * slot away; it only leaves none free until fewer than the new cap are held. A lane is the lowest
 * one no batch holds, so lanes stay within 1 to the cap as long as the cap is kept.
 *
 * <p>This is the workflow's cache of the slots PostgreSQL records, not the guard of the cap: {@link
 * #take} holds what a claim returned even beyond the cap (a repeated claim is answered with the
 * batches its token already holds there), and a chained batch handed back keeps its chain's lane.
 *
 * @param cap the effective cap the slots are counted against
 * @param lanes the lane of each batch holding a slot, by batch number
 */
record Slots(int cap, Map<Integer, Integer> lanes) {
  /** No slot held, counted against a cap of 1 until the run's cap is known. */
  static final Slots NONE = new Slots(1, Map.of());

  Slots {
    lanes = Collections.unmodifiableMap(new LinkedHashMap<>(lanes));
  }

  /** The same slots counted against {@code cap}; those held above it are kept. */
  Slots withCap(int cap) {
    return new Slots(cap, lanes);
  }

  /** Slots held, including those whose completion is not yet handled. */
  int held() {
    return lanes.size();
  }

  /** Whether no slot is held. */
  boolean isEmpty() {
    return lanes.isEmpty();
  }

  /** Slots that may be taken now: the cap less those held, never negative. */
  int free() {
    return Math.max(0, cap - lanes.size());
  }

  /** The lowest lane no batch holds: the one the next batch started takes. */
  int lowestFreeLane() {
    int lane = 1;
    while (lanes.containsValue(lane)) {
      lane++;
    }
    return lane;
  }

  /** The lane {@code batch} holds. */
  int laneOf(int batch) {
    Integer lane = lanes.get(batch);
    if (lane == null) {
      throw new IllegalStateException("batch " + batch + " holds no slot");
    }
    return lane;
  }

  /** The slots with {@code batch} holding {@code lane} too. */
  Slots take(BatchRef batch, int lane) {
    Map<Integer, Integer> next = new LinkedHashMap<>(lanes);
    next.put(batch.number(), lane);
    return new Slots(cap, next);
  }

  /** The slots with {@code batch}'s given back: its completion was handled. */
  Slots release(int batch) {
    Map<Integer, Integer> next = new LinkedHashMap<>(lanes);
    next.remove(batch);
    return new Slots(cap, next);
  }
}
