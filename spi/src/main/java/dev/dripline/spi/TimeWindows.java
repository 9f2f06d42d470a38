package dev.dripline.spi;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * The windows a run of a {@link WindowedBackfillDefinition} covers (K4 in docs/spec.md): from
 * {@code from} (inclusive) to {@code to} (exclusive) in steps of one window; the last window ends
 * at {@code to} and may be shorter. Instants ({@link KeyType#TIMESTAMPTZ} keys) step by a {@link
 * Duration}, dates ({@link KeyType#DATE}) by a number of days.
 */
public final class TimeWindows {
  private final Object from;
  private final Object to;
  private final long step;

  private TimeWindows(Object from, Object to, long step) {
    this.from = from;
    this.to = to;
    this.step = step;
  }

  /**
   * Windows of {@code length} over {@code [from, to)}, kept to microseconds as timestamptz is.
   *
   * @throws IllegalArgumentException when {@code length} is not a positive number of microseconds
   *     or {@code to} is before {@code from}
   */
  public static TimeWindows of(Instant from, Instant to, Duration length) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    // A window longer than ~292,000 years covers any range: as long as a long of microseconds.
    long micros;
    try {
      micros = micros(length);
    } catch (ArithmeticException e) {
      micros = Long.MAX_VALUE;
    }
    if (micros <= 0) {
      throw new IllegalArgumentException("a window is a positive duration, not " + length);
    }
    Instant start = from.truncatedTo(ChronoUnit.MICROS);
    Instant end = to.truncatedTo(ChronoUnit.MICROS);
    if (end.isBefore(start)) {
      throw new IllegalArgumentException(
          "the windows end (" + to + ") before they start (" + from + ")");
    }
    return new TimeWindows(start, end, micros);
  }

  /**
   * Windows of {@code days} days over {@code [from, to)}.
   *
   * @throws IllegalArgumentException when {@code days} is not positive or {@code to} is before
   *     {@code from}
   */
  public static TimeWindows days(LocalDate from, LocalDate to, int days) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    if (days <= 0) {
      throw new IllegalArgumentException("a window is a positive number of days, not " + days);
    }
    if (to.isBefore(from)) {
      throw new IllegalArgumentException(
          "the windows end (" + to + ") before they start (" + from + ")");
    }
    return new TimeWindows(from, to, days);
  }

  /** The key type these windows' starts have: timestamptz or date. */
  public KeyType keyType() {
    return from instanceof Instant ? KeyType.TIMESTAMPTZ : KeyType.DATE;
  }

  /** How many windows there are. */
  public long count() {
    long span = units(to);
    return span == 0 ? 0 : (span - 1) / step + 1;
  }

  /** Window {@code index} (from 0). */
  public TimeWindow window(long index) {
    if (index < 0 || index >= count()) {
      throw new IndexOutOfBoundsException("window " + index + " of " + count());
    }
    long start = index * step;
    long end = Math.min(start + step, units(to));
    return new TimeWindow(at(start), at(end));
  }

  /**
   * The index of the first window that starts after {@code key} (a window's start or any value of
   * the key's type); 0 for null.
   */
  public long indexAfter(Object key) {
    if (key == null) {
      return 0;
    }
    long units = units(key);
    return units < 0 ? 0 : Math.min(count(), units / step + 1);
  }

  private long units(Object value) {
    if (from instanceof Instant start) {
      return micros(Duration.between(start, (Instant) value));
    }
    return ChronoUnit.DAYS.between((LocalDate) from, (LocalDate) value);
  }

  /** Whole microseconds, rounded down: seconds and nanos, as toNanos() overflows past 292 years. */
  private static long micros(Duration duration) {
    return Math.addExact(
        Math.multiplyExact(duration.getSeconds(), 1_000_000L), duration.getNano() / 1_000);
  }

  private Object at(long units) {
    if (from instanceof Instant start) {
      return start.plus(units, ChronoUnit.MICROS);
    }
    return ((LocalDate) from).plusDays(units);
  }

  @Override
  public String toString() {
    return "["
        + from
        + ", "
        + to
        + ") by "
        + (from instanceof Instant ? Duration.ofNanos(step * 1_000) : step + " day(s)");
  }
}
