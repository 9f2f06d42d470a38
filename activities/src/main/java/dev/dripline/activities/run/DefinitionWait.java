package dev.dripline.activities.run;

import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.time.Instant;

/**
 * How a batch or planning attempt that reached a worker which does not host its run's definition
 * ends: the task waits for a worker that does. Workers of two versions share the task queue during
 * a rolling deploy (one that adds a definition sends some of its run's tasks to workers of the
 * version before), and deployments hosting different definitions may share it for good; Temporal
 * hands each attempt to whichever worker polls first.
 *
 * <p>So the attempt fails retryably, as {@link DriplineFailure#DEFINITION_NOT_HOSTED}, with a next
 * retry after {@link #FIRST_DELAY}, then after as long as the task has waited so far, at most
 * {@link #MAX_DELAY}; none of these attempts counts against the batch policy's attempts. Once the
 * task has waited {@code dripline.engine.unknown-backfill-wait}, the attempt fails for good, as
 * {@link DriplineFailure#UNKNOWN_BACKFILL}, naming the definition and the wait.
 */
final class DefinitionWait {
  /** The delay before the first attempt after one that found the definition missing. */
  static final Duration FIRST_DELAY = Duration.ofSeconds(1);

  /** The longest delay between two attempts of a waiting task. */
  static final Duration MAX_DELAY = Duration.ofSeconds(30);

  private final Duration bound;

  /** A wait of {@code bound} at most ({@code dripline.engine.unknown-backfill-wait}). */
  DefinitionWait(Duration bound) {
    this.bound = bound.isNegative() ? Duration.ZERO : bound;
  }

  /**
   * The failure of an attempt on a worker that does not host {@code backfill}, for a task that has
   * been waiting for one since {@code since}: retryable, with the next attempt's delay, while the
   * wait lasts; non-retryable once it is over.
   */
  ApplicationFailure notHosted(String backfill, Instant since, Instant now) {
    Duration waited = Duration.between(since, now);
    if (waited.isNegative()) {
      waited = Duration.ZERO;
    }
    if (waited.compareTo(bound) >= 0) {
      return ApplicationFailure.newNonRetryableFailure(
          "no backfill definition named "
              + backfill
              + " is registered in the workers that took this task, and no worker that hosts it"
              + " took it within "
              + text(bound)
              + " (dripline.engine.unknown-backfill-wait)",
          DriplineFailure.UNKNOWN_BACKFILL.name());
    }
    Duration delay = waited.compareTo(FIRST_DELAY) < 0 ? FIRST_DELAY : waited;
    if (delay.compareTo(MAX_DELAY) > 0) {
      delay = MAX_DELAY;
    }
    Duration left = bound.minus(waited);
    if (delay.compareTo(left) > 0) {
      delay = left;
    }
    return ApplicationFailure.newFailureWithCauseAndDelay(
        "no backfill definition named "
            + backfill
            + " is registered in this worker; waiting up to "
            + text(bound)
            + " for a worker that hosts it",
        DriplineFailure.DEFINITION_NOT_HOSTED.name(),
        null,
        delay);
  }

  /** Thrown where a planning call finds that this worker does not host its run's definition. */
  static final class NotHosted extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String backfill;

    NotHosted(String backfill) {
      super(
          "no backfill definition named " + backfill + " is registered in this worker",
          null,
          false,
          false);
      this.backfill = backfill;
    }

    String backfill() {
      return backfill;
    }
  }

  /** A duration as configured: {@code 10m}, {@code 90s}, {@code 250ms}. */
  static String text(Duration duration) {
    long millis = duration.toMillis();
    if (millis % 60_000 == 0 && millis > 0) {
      return millis / 60_000 + "m";
    }
    if (millis % 1_000 == 0) {
      return millis / 1_000 + "s";
    }
    return millis + "ms";
  }
}
