package dev.dripline.workflows.run;

import java.time.Duration;

/**
 * How the engine runs one batch: timeouts and bounded retries with exponential backoff.
 *
 * <p>Only attempts that fail — the definition threw, or the attempt's own record failed — spend a
 * batch's {@code maxAttempts}; the activity counts them itself (a batch's {@code failed_attempts}
 * in PostgreSQL, a planning call's in its heartbeat details) and reports the last one as final. An
 * attempt that vanishes with its worker (a heartbeat or start-to-close timeout) spends none: it is
 * not the definition's failure, and it is retried without limit, on a backoff capped at {@link
 * #LOST_ATTEMPT_MAX_INTERVAL} (R12: killing a process loses nothing, and the run completes once the
 * processes return).
 *
 * @param startToCloseMillis longest one attempt may take
 * @param heartbeatMillis an attempt that does not heartbeat this long is presumed dead
 * @param maxAttempts failed attempts before the batch (or planning call) fails, at least 1
 * @param initialIntervalMillis delay before the attempt after the first failed one
 * @param maxIntervalMillis cap on the delay after a failed attempt
 */
public record BatchPolicy(
    long startToCloseMillis,
    long heartbeatMillis,
    int maxAttempts,
    long initialIntervalMillis,
    long maxIntervalMillis) {

  /** Cap on the backoff between attempts that vanished with their worker. */
  public static final Duration LOST_ATTEMPT_MAX_INTERVAL = Duration.ofMinutes(30);

  /** Whether {@code failedAttempts} failed attempts leave none to try again. */
  public boolean exhaustedBy(int failedAttempts) {
    return failedAttempts >= maxAttempts;
  }

  /**
   * The delay before the next attempt after {@code failedAttempts} (at least 1) failed ones: the
   * initial interval, doubled with each further failure, at most the maximum interval.
   */
  public Duration retryDelay(int failedAttempts) {
    long delay = initialIntervalMillis;
    for (int i = 1; i < failedAttempts && delay < maxIntervalMillis; i++) {
      delay *= 2;
    }
    return Duration.ofMillis(Math.max(0, Math.min(delay, maxIntervalMillis)));
  }
}
