package dev.dripline.workflows.targets;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * T6 classification over every state and streaks {0, 1, 2, 3, 10}: failing ⇔ not primed and (streak
 * ≥ 3 or needs_resync).
 */
class FailureStreakTest {

  static Stream<Arguments> statesAndStreaks() {
    return Stream.of(
        Arguments.of(TargetState.PENDING_BACKFILL, 0, false),
        Arguments.of(TargetState.PENDING_BACKFILL, 1, false),
        Arguments.of(TargetState.PENDING_BACKFILL, 2, false),
        Arguments.of(TargetState.PENDING_BACKFILL, 3, true),
        Arguments.of(TargetState.PENDING_BACKFILL, 10, true),
        Arguments.of(TargetState.BACKFILLING, 0, false),
        Arguments.of(TargetState.BACKFILLING, 1, false),
        Arguments.of(TargetState.BACKFILLING, 2, false),
        Arguments.of(TargetState.BACKFILLING, 3, true),
        Arguments.of(TargetState.BACKFILLING, 10, true),
        Arguments.of(TargetState.PRIMED, 0, false),
        Arguments.of(TargetState.PRIMED, 1, false),
        Arguments.of(TargetState.PRIMED, 2, false),
        Arguments.of(TargetState.PRIMED, 3, false),
        Arguments.of(TargetState.PRIMED, 10, false),
        Arguments.of(TargetState.NEEDS_RESYNC, 0, true),
        Arguments.of(TargetState.NEEDS_RESYNC, 1, true),
        Arguments.of(TargetState.NEEDS_RESYNC, 2, true),
        Arguments.of(TargetState.NEEDS_RESYNC, 3, true),
        Arguments.of(TargetState.NEEDS_RESYNC, 10, true));
  }

  @ParameterizedTest(name = "{0} with streak {1} → failing {2}")
  @MethodSource("statesAndStreaks")
  void classifiesEveryStateAndStreak(TargetState state, int streak, boolean failing) {
    assertThat(FailureStreak.isFailing(state, streak)).isEqualTo(failing);
    TargetSnapshot snapshot = snapshot(state, streak);
    assertThat(snapshot.failing()).isEqualTo(failing);
    assertThat(TargetView.of(snapshot).failing()).isEqualTo(failing);
  }

  @Test
  void primedWithStreakTenIsNotFailing() {
    assertThat(FailureStreak.isFailing(TargetState.PRIMED, 10)).isFalse();
  }

  @Test
  void needsResyncWithStreakZeroIsFailing() {
    assertThat(FailureStreak.isFailing(TargetState.NEEDS_RESYNC, 0)).isTrue();
  }

  @Test
  void aDeletedTargetIsNotFailing() {
    assertThat(TargetSnapshot.notFound("gone").failing()).isFalse();
  }

  @Test
  void onlyUnprimedTargetsReportBlockedLiveBatches() {
    assertThat(TargetView.of(snapshot(TargetState.PENDING_BACKFILL, 3)).blockedLiveBatches())
        .isEqualTo(7);
    assertThat(TargetView.of(snapshot(TargetState.PRIMED, 3)).blockedLiveBatches()).isZero();
    assertThat(TargetView.of(snapshot(TargetState.PRIMED, 3)).oldestBlockedAt()).isNull();
  }

  private static TargetSnapshot snapshot(TargetState state, int streak) {
    Instant t = Instant.parse("2026-11-01T10:00:00Z");
    return new TargetSnapshot(
        "t",
        true,
        "b",
        null,
        state,
        streak,
        streak > 0 ? t : null,
        null,
        null,
        null,
        null,
        7,
        t,
        null);
  }
}
