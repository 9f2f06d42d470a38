package dev.dripline.store.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CheckRuleTest {
  private static final CheckLimits HOLD = new CheckLimits(10, 8, OnUnknown.HOLD);
  private static final CheckLimits PROCEED = new CheckLimits(10, 8, OnUnknown.PROCEED);
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant T1 = T0.plusSeconds(5);

  private static CheckStatus status(CheckState state, boolean holding) {
    return new CheckStatus(state, holding, T0);
  }

  @ParameterizedTest(name = "previous {0}/{1}, value {2} -> {3}/{4}")
  @CsvSource({
    // previous state, previous holding, value, next state, next holding
    "CLEAR,   false, 11,   OVER,  true",
    "CLEAR,   false, 10,   CLEAR, false",
    "CLEAR,   false, 9,    CLEAR, false",
    "CLEAR,   false, 8,    CLEAR, false",
    "CLEAR,   false, 7.9,  CLEAR, false",
    "OVER,    true,  11,   OVER,  true",
    "OVER,    true,  10,   OVER,  true",
    "OVER,    true,  9,    OVER,  true",
    "OVER,    true,  8,    OVER,  true",
    "OVER,    true,  7.99, CLEAR, false",
    "UNKNOWN, true,  9,    OVER,  true",
    "UNKNOWN, true,  7,    CLEAR, false",
    "UNKNOWN, false, 9,    CLEAR, false",
    "UNKNOWN, false, 11,   OVER,  true",
  })
  void aValueIsJudgedWithHysteresis(
      CheckState previousState,
      boolean previousHolding,
      double value,
      CheckState state,
      boolean holding) {
    CheckStatus next = CheckRule.next(status(previousState, previousHolding), value, HOLD, T1);

    assertThat(next.state()).isEqualTo(state);
    assertThat(next.holding()).isEqualTo(holding);
  }

  @Test
  void aFirstReadingInTheBandIsClear() {
    CheckStatus next = CheckRule.next(null, 9.0, HOLD, T1);

    assertThat(next).isEqualTo(new CheckStatus(CheckState.CLEAR, false, T1));
  }

  @Test
  void aFirstReadingOverTheThresholdHoldsSinceNow() {
    assertThat(CheckRule.next(null, 10.5, HOLD, T1))
        .isEqualTo(new CheckStatus(CheckState.OVER, true, T1));
  }

  @Test
  void unknownHoldsWithHold() {
    CheckStatus next = CheckRule.next(status(CheckState.CLEAR, false), null, HOLD, T1);

    assertThat(next).isEqualTo(new CheckStatus(CheckState.UNKNOWN, true, T1));
  }

  @Test
  void unknownDoesNotHoldWithProceed() {
    CheckStatus next = CheckRule.next(status(CheckState.CLEAR, false), null, PROCEED, T1);

    assertThat(next).isEqualTo(new CheckStatus(CheckState.UNKNOWN, false, T0));
  }

  @Test
  void unknownWithProceedReleasesAnOverCheck() {
    CheckStatus next = CheckRule.next(status(CheckState.OVER, true), null, PROCEED, T1);

    assertThat(next).isEqualTo(new CheckStatus(CheckState.UNKNOWN, false, T1));
  }

  @Test
  void aNaNIsUnknown() {
    assertThat(CheckRule.next(null, Double.NaN, PROCEED, T1).state()).isEqualTo(CheckState.UNKNOWN);
  }

  @Test
  void sinceStaysWhileHoldingGoesOnAcrossStates() {
    CheckStatus over = CheckRule.next(null, 11.0, HOLD, T0);
    CheckStatus unknown = CheckRule.next(over, null, HOLD, T1);
    CheckStatus band = CheckRule.next(unknown, 9.0, HOLD, T1.plusSeconds(5));

    assertThat(unknown).isEqualTo(new CheckStatus(CheckState.UNKNOWN, true, T0));
    assertThat(band).isEqualTo(new CheckStatus(CheckState.OVER, true, T0));
  }

  @Test
  void sinceMovesWhenACheckStopsHolding() {
    CheckStatus over = CheckRule.next(null, 11.0, HOLD, T0);
    CheckStatus clear = CheckRule.next(over, 1.0, HOLD, T1);
    CheckStatus stillClear = CheckRule.next(clear, 9.0, HOLD, T1.plusSeconds(5));

    assertThat(clear.since()).isEqualTo(T1);
    assertThat(stillClear).isEqualTo(new CheckStatus(CheckState.CLEAR, false, T1));
  }

  @Test
  void resumeBelowEqualToThresholdHasNoBand() {
    CheckLimits limits = new CheckLimits(10, 10, OnUnknown.HOLD);
    CheckStatus over = CheckRule.next(null, 11.0, limits, T0);

    assertThat(CheckRule.next(over, 10.0, limits, T1).state()).isEqualTo(CheckState.OVER);
    assertThat(CheckRule.next(over, 9.99, limits, T1).state()).isEqualTo(CheckState.CLEAR);
  }
}
