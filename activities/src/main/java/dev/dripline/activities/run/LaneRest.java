package dev.dripline.activities.run;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.dripline.store.run.RunRepository;
import jakarta.inject.Singleton;
import java.util.concurrent.TimeUnit;

/**
 * A run's pace ({@code niceRatio}, docs/operations.md "Pacing a run"): after each batch, the lane
 * that ran it rests {@code niceRatio} times that batch's duration before it starts another, keeping
 * its slot. With 1, a lane works at most half the time; load that slows batches lengthens the
 * rests.
 *
 * <p>A run's ratio is fixed when it is created, so it is read once per run and kept for the {@value
 * #CACHED_RUNS} runs read most recently.
 */
@Singleton
public class LaneRest {
  /** The longest slice a rest sleeps before it looks again whether the run may go on. */
  static final long SLICE_MILLIS = 1_000;

  private static final int CACHED_RUNS = 256;

  private final RunRepository runs;

  /** Evicts on the calling thread, not in the shared ForkJoinPool: removing an entry is cheap. */
  private final Cache<Long, Double> ratios =
      Caffeine.newBuilder().maximumSize(CACHED_RUNS).executor(Runnable::run).build();

  public LaneRest(RunRepository runs) {
    this.runs = runs;
  }

  /** Run {@code runId}'s nice ratio; 0 (not paced) if the run is gone. */
  public double niceRatio(long runId) {
    return ratios.get(runId, id -> runs.findNiceRatio(id).orElse(0.0));
  }

  /**
   * How long a lane rests after a batch that took {@code batchNanos} (its run and its record), at
   * {@code ratio}: {@code ratio × batchNanos}, none for a ratio or a duration that is not positive.
   */
  static long restNanos(double ratio, long batchNanos) {
    if (!(ratio > 0) || batchNanos <= 0) {
      return 0;
    }
    double rest = ratio * batchNanos;
    return rest >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(rest);
  }

  /** The next slice of a rest with {@code leftNanos} to go: all of it, at most one second. */
  static long sliceMillis(long leftNanos) {
    if (leftNanos <= 0) {
      return 0;
    }
    return Math.min(SLICE_MILLIS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos + 999_999)));
  }
}
