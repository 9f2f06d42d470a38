package dev.dripline.spi;

import java.time.Instant;
import java.time.LocalDate;

/**
 * One window of a {@link WindowedBackfillDefinition}: {@code [start, end)}, both {@link Instant}s
 * or both {@link LocalDate}s.
 *
 * @param start first instant or day of the window, inclusive
 * @param end where the window ends, exclusive
 */
public record TimeWindow(Object start, Object end) {
  public Instant startInstant() {
    return (Instant) start;
  }

  public Instant endInstant() {
    return (Instant) end;
  }

  public LocalDate startDate() {
    return (LocalDate) start;
  }

  public LocalDate endDate() {
    return (LocalDate) end;
  }

  @Override
  public String toString() {
    return "[" + start + ", " + end + ")";
  }
}
