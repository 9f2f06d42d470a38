package dev.dripline.store.throttle;

import java.util.Locale;

/** A check's state after an evaluation ({@link CheckRule}); stored in lower case. */
public enum CheckState {
  /** Below the threshold (or in the hysteresis band after being clear). */
  CLEAR,
  /** Above the threshold, or in the hysteresis band after being over or holding. */
  OVER,
  /** The reading failed, timed out, or found no value. */
  UNKNOWN;

  public String stored() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static CheckState ofStored(String stored) {
    return valueOf(stored.toUpperCase(Locale.ROOT));
  }
}
