package dev.dripline.workflows.run;

import java.util.function.DoubleToIntFunction;

/**
 * How fast a run's chains take pending batches, measured from the planner's reports, and when the
 * run's workflow looks at its plan-ahead window next. Chains take batches without the workflow
 * seeing them; each planning call reports what it found pending and what it added, and the batches
 * that disappeared in between are what the chains took.
 *
 * <p>An immutable value of the run's state ({@link PlanWindow#pace}): it reads no clock of its own,
 * the caller passes the workflow's time, and each report makes a new pace.
 *
 * @param pendingLooked pending batches the last report left; what the next one finds missing was
 *     taken
 * @param measuredFromMillis start of the current measurement, in workflow time; -1 until the first
 *     report
 * @param takenSince batches taken since the measurement started
 * @param takenPerMilli pending batches the chains took per millisecond over the last measurement; 0
 *     before one
 * @param lookEveryMillis how long the loop waits for something to happen before it looks at the
 *     window again
 */
record ChainPace(
    int pendingLooked,
    long measuredFromMillis,
    int takenSince,
    double takenPerMilli,
    long lookEveryMillis) {
  /**
   * How often, at most and at least, the loop looks at the window while chains run. Each look costs
   * a timer, a planning activity and two workflow tasks; between the bounds it comes about when the
   * chains will have taken a quarter of the window. Fast batches keep the shortest interval; slow
   * ones (a run of one-second batches at cap 2 takes two a second of a window of 32) are looked at
   * every few seconds, not twice a second: many such runs looking twice a second would keep the
   * worker and the Temporal server busy with looks that find nothing to plan.
   */
  static final long MIN_LOOK_MILLIS = 500;

  static final long MAX_LOOK_MILLIS = 5_000;

  /**
   * The shortest span a pace is measured over. Shorter than the shortest look: the window is sized
   * by the pace, and at the start of a run the planner's first reports come a hundred milliseconds
   * apart while fast chains already drain the window sized without it, and the first look's timer
   * may fire late: chains that empty the window before it would all wait for the next page. Not
   * shorter: reports moments apart make any rate up.
   */
  static final long MIN_SPAN_MILLIS = 200;

  /** A pace not yet measured. */
  ChainPace() {
    this(0, -1, 0, 0, MIN_LOOK_MILLIS);
  }

  /**
   * The pace after a planning report: {@code pendingBatches} pending after the call, {@code
   * batchesCreated} of them added by it. Once the measurement spans {@link #MIN_SPAN_MILLIS}, sets
   * the pace and the next look: when the chains will have taken a quarter of {@code window} (the
   * window for a pace), within {@link #MIN_LOOK_MILLIS} and {@link #MAX_LOOK_MILLIS}.
   */
  ChainPace report(
      long nowMillis, int pendingBatches, int batchesCreated, DoubleToIntFunction window) {
    if (measuredFromMillis < 0) {
      return new ChainPace(pendingBatches, nowMillis, 0, takenPerMilli, lookEveryMillis);
    }
    // What the planner found pending before it added its page, against what it left last time.
    int taken = takenSince + Math.max(0, pendingLooked - (pendingBatches - batchesCreated));
    long elapsed = nowMillis - measuredFromMillis;
    if (elapsed < MIN_SPAN_MILLIS) {
      return new ChainPace(
          pendingBatches, measuredFromMillis, taken, takenPerMilli, lookEveryMillis);
    }
    double pace = taken / (double) elapsed;
    double quarterMillis = window.applyAsInt(pace) / 4.0 / Math.max(pace, 1e-9);
    long look = (long) Math.max(MIN_LOOK_MILLIS, Math.min(MAX_LOOK_MILLIS, quarterMillis));
    return new ChainPace(pendingBatches, nowMillis, 0, pace, look);
  }

  /** The pace forgotten: what the chains may take changed (cap, pause, resume). */
  ChainPace restart() {
    return new ChainPace(pendingLooked, -1, takenSince, 0, MIN_LOOK_MILLIS);
  }
}
