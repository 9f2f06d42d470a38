package dev.dripline.app.ui;

import io.micronaut.core.annotation.Nullable;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** How the dashboard's templates write figures and times (as {@code fmt} in their models). */
public final class UiFormat {
  static final UiFormat INSTANCE = new UiFormat();

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
          .withZone(ZoneOffset.UTC);

  private UiFormat() {}

  /** A time in UTC to the second, or a dash. */
  public String time(@Nullable Instant instant) {
    return instant == null ? "–" : TIME.format(instant);
  }

  /** Seconds as {@code 1h 02m}, {@code 3m 05s} or {@code 12s}, or a dash. */
  public String seconds(@Nullable Long seconds) {
    if (seconds == null) {
      return "–";
    }
    Duration d = Duration.ofSeconds(Math.max(0, seconds));
    if (d.toDays() > 0) {
      return String.format(Locale.ROOT, "%dd %02dh", d.toDays(), d.toHoursPart());
    }
    if (d.toHours() > 0) {
      return String.format(Locale.ROOT, "%dh %02dm", d.toHours(), d.toMinutesPart());
    }
    if (d.toMinutes() > 0) {
      return String.format(Locale.ROOT, "%dm %02ds", d.toMinutes(), d.toSecondsPart());
    }
    return d.toSeconds() + "s";
  }

  /** A count with thousands separators. */
  public String count(@Nullable Number value) {
    return value == null ? "–" : String.format(Locale.ROOT, "%,d", value.longValue());
  }

  /** A rate per minute, rounded. */
  public String rate(double perMinute) {
    return perMinute >= 100
        ? String.format(Locale.ROOT, "%,.0f", perMinute)
        : String.format(Locale.ROOT, "%.1f", perMinute);
  }

  /** A decimal figure, or a dash. */
  public String decimal(@Nullable Double value) {
    return value == null ? "–" : String.format(Locale.ROOT, "%.2f", value);
  }
}
