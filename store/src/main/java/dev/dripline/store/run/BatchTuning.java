package dev.dripline.store.run;

import java.time.Duration;

/**
 * A run's batch-size tuning (P4 in docs/spec.md): batches not yet planned are cut to the size that
 * takes {@code targetMillis}, as the run's recent batches measure it, between {@code minBatchSize}
 * and {@code maxBatchSize} and never more than {@link #MAX_STEP} times larger or smaller than the
 * size before. The app resolves it when it creates a run (the run's settings, else its
 * definition's, else the defaults) and the run's record keeps it; the planner applies {@link
 * #nextSize} once per planning call. A pure rule: no clock, no I/O.
 *
 * <p>The size that meets the target is {@code targetMillis} times the keys per millisecond of the
 * run's last {@link #MEASURED_BATCHES} completed batches (their keys over their summed durations):
 * a moving average of measured durations per key. Measured at one size, it holds at another when a
 * batch's time grows with its keys; where a batch also has a fixed cost, small batches measure a
 * slower rate and the size approaches the target from below, measured again at each step.
 *
 * @param targetMillis the duration a batch should take, in milliseconds (at least 1)
 * @param minBatchSize the least size a batch is cut to (at least 1); the run's last batch may be
 *     smaller, as every run's may
 * @param maxBatchSize the largest size (at least {@code minBatchSize})
 */
public record BatchTuning(long targetMillis, int minBatchSize, int maxBatchSize) {
  /** Completed batches the moving average spans: the run's last ones, by number. */
  public static final int MEASURED_BATCHES = 20;

  /** The most one step changes a size by, up or down. */
  public static final double MAX_STEP = 1.5;

  /**
   * {@code maxBatchSize} when neither run nor definition sets one: a planning page of keys, or the
   * run's {@code batchSize} or {@code minBatchSize} if larger.
   */
  public static final int DEFAULT_MAX_BATCH_SIZE = 100_000;

  /** The longest target accepted; a batch's attempt times out after an hour by default. */
  public static final Duration LONGEST_TARGET = Duration.ofDays(1);

  /** What a bad target duration is told, after its field's name. */
  public static final String TARGET_EXPECTED =
      "a positive ISO-8601 duration of PT0.001S to P1D, such as PT2S";

  public BatchTuning {
    if (targetMillis < 1 || minBatchSize < 1 || maxBatchSize < minBatchSize) {
      throw new IllegalArgumentException(
          "batch tuning needs targetMillis >= 1 and 1 <= minBatchSize <= maxBatchSize, not "
              + targetMillis
              + ", "
              + minBatchSize
              + ", "
              + maxBatchSize);
    }
  }

  /**
   * The tuning a record holds: none when {@code targetMillis} is null (the run is not tuned); the
   * sizes then as stored, which the record's check keeps set and ordered.
   */
  public static BatchTuning of(Long targetMillis, Integer minBatchSize, Integer maxBatchSize) {
    if (targetMillis == null) {
      return null;
    }
    return new BatchTuning(targetMillis, minBatchSize, maxBatchSize);
  }

  /**
   * The tuning of a run whose settings are those given (each the run's own, else its definition's):
   * none without a target; else {@code minBatchSize} 1 and {@code maxBatchSize} the larger of
   * {@link #DEFAULT_MAX_BATCH_SIZE}, {@code batchSize} and the least size, where not given.
   *
   * @throws IllegalArgumentException when the least size exceeds the largest
   */
  public static BatchTuning resolve(
      Long targetMillis, Integer minBatchSize, Integer maxBatchSize, int batchSize) {
    if (targetMillis == null) {
      return null;
    }
    int min = minBatchSize == null ? 1 : minBatchSize;
    int max =
        maxBatchSize != null
            ? maxBatchSize
            : Math.max(DEFAULT_MAX_BATCH_SIZE, Math.max(batchSize, min));
    return new BatchTuning(targetMillis, min, max);
  }

  /**
   * A target duration in whole milliseconds.
   *
   * @throws IllegalArgumentException saying {@link #TARGET_EXPECTED} when it is not positive, under
   *     a millisecond or over {@link #LONGEST_TARGET}
   */
  public static long targetMillis(Duration target) {
    if (target == null
        || target.compareTo(Duration.ofMillis(1)) < 0
        || target.compareTo(LONGEST_TARGET) > 0) {
      throw new IllegalArgumentException("must be " + TARGET_EXPECTED);
    }
    return target.toMillis();
  }

  /** The target duration as a {@link Duration} (shown as ISO-8601, e.g. {@code PT2S}). */
  public Duration target() {
    return Duration.ofMillis(targetMillis);
  }

  /** The size a tuned run's first batches are cut to: its {@code batchSize}, within the bounds. */
  public int startingSize(int batchSize) {
    return clamp(batchSize, minBatchSize, maxBatchSize);
  }

  /**
   * The size of the next batches after batches of {@code current} keys, given the run's recent
   * completed batches: the size that meets the target at their rate, moved from {@code current} by
   * at most {@link #MAX_STEP} either way, within the bounds. Without measurements (no batch
   * completed yet) it is {@code current}, within the bounds; batches measured at no time at all
   * (under the clock's resolution) grow by the largest step.
   */
  public int nextSize(int current, RecentBatches recent) {
    int from = clamp(current, minBatchSize, maxBatchSize);
    if (recent == null || recent.batches() == 0 || recent.keys() <= 0) {
      return from;
    }
    long up = largestStepUp(from);
    long down = largestStepDown(from);
    double ideal =
        recent.millis() <= 0
            ? Double.POSITIVE_INFINITY
            : (double) targetMillis * recent.keys() / recent.millis();
    long next = ideal >= up ? up : ideal <= down ? down : Math.round(ideal);
    return clamp(next, minBatchSize, maxBatchSize);
  }

  /** The largest size one step up from {@code size} reaches: {@code floor(size × 1.5)}. */
  static long largestStepUp(int size) {
    return (long) size + size / 2;
  }

  /** The least size one step down from {@code size} reaches: {@code ceil(size / 1.5)}. */
  static long largestStepDown(int size) {
    return (2L * size + 2) / 3;
  }

  private static int clamp(long size, int min, int max) {
    return (int) Math.max(min, Math.min(max, size));
  }
}
