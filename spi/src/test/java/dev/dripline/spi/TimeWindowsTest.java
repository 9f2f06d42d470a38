package dev.dripline.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;

class TimeWindowsTest {

  @Test
  void daysAreCutIntoWindowsTheLastOneShorter() {
    TimeWindows weeks = TimeWindows.days(LocalDate.of(2026, 11, 1), LocalDate.of(2026, 11, 20), 7);

    assertThat(weeks.keyType()).isEqualTo(KeyType.DATE);
    assertThat(weeks.count()).isEqualTo(3);
    assertThat(weeks.window(0))
        .isEqualTo(new TimeWindow(LocalDate.of(2026, 11, 1), LocalDate.of(2026, 11, 8)));
    assertThat(weeks.window(2))
        .isEqualTo(new TimeWindow(LocalDate.of(2026, 11, 15), LocalDate.of(2026, 11, 20)));
  }

  @Test
  void theWindowAfterAWindowsLastKeyIsTheNextOne() {
    TimeWindows hours =
        TimeWindows.of(
            Instant.parse("2026-11-30T00:00:00Z"),
            Instant.parse("2026-11-30T03:30:00Z"),
            Duration.ofHours(1));

    assertThat(hours.count()).isEqualTo(4);
    assertThat(hours.indexAfter(null)).isZero();
    assertThat(hours.indexAfter(Instant.parse("2026-11-30T00:59:59.999999Z"))).isEqualTo(1);
    assertThat(hours.indexAfter(Instant.parse("2026-11-30T03:29:59.999999Z"))).isEqualTo(4);
    assertThat(hours.window(3).endInstant()).isEqualTo(Instant.parse("2026-11-30T03:30:00Z"));
  }

  @Test
  void aWindowLongerThanTheRangeIsOneWindowHoweverLong() {
    Instant from = Instant.parse("1900-01-01T00:00:00Z");
    Instant to = Instant.parse("2400-01-01T00:00:00Z");

    assertThat(TimeWindows.of(from, to, Duration.ofDays(365L * 1000)).count()).isEqualTo(1);
    assertThat(TimeWindows.of(from, to, Duration.ofSeconds(Long.MAX_VALUE)).count()).isEqualTo(1);
    assertThat(TimeWindows.of(from, to, Duration.ofDays(365L * 100)).count()).isEqualTo(6);
  }

  @Test
  void anEmptyRangeHasNoWindowsAndABadWindowIsRefused() {
    LocalDate day = LocalDate.of(2026, 11, 30);

    assertThat(TimeWindows.days(day, day, 1).count()).isZero();
    assertThatThrownBy(() -> TimeWindows.days(day, day.plusDays(1), 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> TimeWindows.days(day, day.minusDays(1), 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> TimeWindows.of(Instant.EPOCH, Instant.EPOCH.plusSeconds(1), Duration.ofNanos(10)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
