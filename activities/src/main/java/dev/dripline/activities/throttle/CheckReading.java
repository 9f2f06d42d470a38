package dev.dripline.activities.throttle;

import io.micronaut.core.annotation.Nullable;

/**
 * One reading of a health check.
 *
 * @param value the number read, or {@code null} if unknown
 * @param error why it is unknown (an error, a timeout, no row, NULL), or {@code null}
 */
public record CheckReading(@Nullable Double value, @Nullable String error) {
  static CheckReading of(double value) {
    return new CheckReading(value, null);
  }

  static CheckReading unknown(String error) {
    return new CheckReading(null, error);
  }
}
