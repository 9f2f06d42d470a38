package dev.dripline.workflows.targets;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The planner backoff's bounds (spec T3) with base 30 s and cap 30 min. */
class PlannerBackoffTest {
  private static final PlannerBackoff BACKOFF = new PlannerBackoff(30_000, 1_800_000);
  private static final double ALMOST_ONE = Math.nextDown(1.0);

  @Test
  void firstFailureWaits24To36Seconds() {
    assertThat(BACKOFF.delay(1, 0.0)).isEqualTo(Duration.ofSeconds(24));
    assertThat(BACKOFF.delay(1, 0.5)).isEqualTo(Duration.ofSeconds(30));
    assertThat(BACKOFF.delay(1, ALMOST_ONE)).isEqualTo(Duration.ofSeconds(36));
  }

  @Test
  void secondFailureWaits48To72Seconds() {
    assertThat(BACKOFF.delay(2, 0.0)).isEqualTo(Duration.ofSeconds(48));
    assertThat(BACKOFF.delay(2, ALMOST_ONE)).isEqualTo(Duration.ofSeconds(72));
  }

  @ParameterizedTest
  @ValueSource(ints = {7, 8, 10, 20, 40, 41, 100, 10_000, Integer.MAX_VALUE})
  void longStreaksAreCappedAt30MinutesJitteredSoNeverBeyond36(int failures) {
    assertThat(BACKOFF.delay(failures, 0.0)).isEqualTo(Duration.ofMinutes(24));
    assertThat(BACKOFF.delay(failures, ALMOST_ONE)).isEqualTo(Duration.ofMinutes(36));
  }

  @Test
  void delayDoublesUntilTheCap() {
    for (int failures = 1; failures <= 6; failures++) {
      Duration expected = Duration.ofSeconds(30L << (failures - 1));
      assertThat(BACKOFF.delay(failures, 0.5)).as("failure %d", failures).isEqualTo(expected);
    }
    // 30 s · 2^6 = 32 min is over the cap.
    assertThat(BACKOFF.delay(7, 0.5)).isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void neverShorterThanFourFifthsOfTheBaseEvenForAZeroStreak() {
    assertThat(BACKOFF.delay(0, 0.0)).isEqualTo(Duration.ofSeconds(24));
    assertThat(BACKOFF.delay(-3, 0.0)).isEqualTo(Duration.ofSeconds(24));
  }

  @Test
  void baseAndCapAreConfigurable() {
    PlannerBackoff fast = new PlannerBackoff(1_000, 4_000);
    assertThat(fast.delay(1, 0.5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(fast.delay(5, 0.5)).isEqualTo(Duration.ofSeconds(4));
  }
}
