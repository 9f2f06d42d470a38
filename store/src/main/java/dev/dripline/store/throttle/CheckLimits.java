package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;

/**
 * The numbers the state rule compares a reading with.
 *
 * @param threshold a value above it is over
 * @param resumeBelow once over, a check is clear again only below it; {@code <= threshold}
 * @param onUnknown whether an unknown reading holds
 */
public record CheckLimits(double threshold, double resumeBelow, OnUnknown onUnknown) {

  /**
   * These limits with a runtime override's fields in place of the configured ones: each field the
   * override leaves {@code null} keeps its configured value.
   */
  public CheckLimits overriddenBy(@Nullable CheckOverride override) {
    if (override == null) {
      return this;
    }
    return new CheckLimits(
        override.threshold() == null ? threshold : override.threshold(),
        override.resumeBelow() == null ? resumeBelow : override.resumeBelow(),
        onUnknown);
  }
}
