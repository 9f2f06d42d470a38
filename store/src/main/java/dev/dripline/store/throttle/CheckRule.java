package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * The state rule of a health check (P1), apart from any I/O: from the previous status and one
 * reading, the next status.
 *
 * <ul>
 *   <li>A value above the threshold is over, and holds.
 *   <li>A value below {@code resumeBelow} is clear, and does not hold.
 *   <li>A value from {@code resumeBelow} to the threshold keeps what the check did before
 *       (hysteresis): a check that held is over and still holds; one that did not is clear. A first
 *       reading there is clear.
 *   <li>No value (an error, a timeout, no row, NULL) is unknown; it holds only with {@code
 *       onUnknown = hold}.
 * </ul>
 *
 * {@code since} moves to {@code now} only when {@code holding} changes (or on the first reading),
 * so it says how long runs have been held, or free.
 */
public final class CheckRule {
  private CheckRule() {}

  /**
   * @param previous the status after the last evaluation, or {@code null} before the first
   * @param value the reading, or {@code null} if unknown
   */
  public static CheckStatus next(
      @Nullable CheckStatus previous, @Nullable Double value, CheckLimits limits, Instant now) {
    CheckState state;
    boolean holding;
    if (value == null || value.isNaN()) {
      state = CheckState.UNKNOWN;
      holding = limits.onUnknown() == OnUnknown.HOLD;
    } else if (value > limits.threshold()) {
      state = CheckState.OVER;
      holding = true;
    } else if (value < limits.resumeBelow()) {
      state = CheckState.CLEAR;
      holding = false;
    } else {
      holding = previous != null && previous.holding();
      state = holding ? CheckState.OVER : CheckState.CLEAR;
    }
    Instant since = previous == null || previous.holding() != holding ? now : previous.since();
    return new CheckStatus(state, holding, since);
  }
}
