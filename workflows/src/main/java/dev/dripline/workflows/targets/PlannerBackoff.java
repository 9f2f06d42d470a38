package dev.dripline.workflows.targets;

import java.time.Duration;

/**
 * Delay before a target's next planning attempt (spec T3): {@code min(base · 2^(failures−1), cap) ·
 * jitter}, jitter uniform in [0.8, 1.2]. Temporal adds no jitter of its own, so the workflow draws
 * the jitter from {@code Workflow.newRandom()} and hands it in.
 *
 * @param baseMillis delay after the first failure, before jitter
 * @param capMillis longest delay, before jitter
 */
public record PlannerBackoff(long baseMillis, long capMillis) {
  public static final double JITTER_MIN = 0.8;
  public static final double JITTER_MAX = 1.2;

  /**
   * @param failures consecutive failures so far, at least 1
   * @param unitRandom a uniform draw from [0, 1)
   */
  public Duration delay(int failures, double unitRandom) {
    int exponent = Math.max(0, Math.min(failures - 1, 40));
    double raw = Math.min((double) baseMillis * Math.pow(2, exponent), (double) capMillis);
    double jitter = JITTER_MIN + (JITTER_MAX - JITTER_MIN) * unitRandom;
    return Duration.ofMillis(Math.round(raw * jitter));
  }
}
