package dev.dripline.workflows.targets;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The pure streak rules every implementation of {@link TargetRecordActivities} applies. */
class TargetTransitionsTest {
  private static final TargetSettings SETTINGS =
      new TargetSettings(30_000, 1_800_000, 5_000, 5_000, 100);
  private static final Instant T0 = Instant.parse("2026-11-01T10:00:00Z");

  private static TargetSnapshot target(
      TargetState state, int streak, Instant firstFailedAt, Instant next, Long runId) {
    return new TargetSnapshot(
        "t",
        true,
        "b",
        "g",
        state,
        streak,
        firstFailedAt,
        streak > 0 ? "old error" : null,
        null,
        next,
        runId,
        2,
        T0,
        SETTINGS);
  }

  @Test
  void firstPlanningFailureStartsTheStreakAnchoredOnItsOwnTime() {
    TargetSnapshot after =
        TargetTransitions.planningFailed(
            target(TargetState.BACKFILLING, 0, null, null, null), "boom", false, 0.5, T0);

    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.consecutiveFailures()).isEqualTo(1);
    assertThat(after.firstFailedAt()).isEqualTo(T0);
    assertThat(after.lastError()).isEqualTo("boom");
    assertThat(after.lastAttemptAt()).isEqualTo(T0);
    assertThat(after.nextAttemptAt()).isEqualTo(T0.plusSeconds(30));
  }

  @Test
  void laterPlanningFailureKeepsFirstFailedAt() {
    Instant first = T0.minus(Duration.ofHours(3));
    TargetSnapshot after =
        TargetTransitions.planningFailed(
            target(TargetState.BACKFILLING, 4, first, null, null), "again", false, 0.5, T0);

    assertThat(after.consecutiveFailures()).isEqualTo(5);
    assertThat(after.firstFailedAt()).isEqualTo(first);
    assertThat(after.nextAttemptAt()).isEqualTo(T0.plus(Duration.ofMinutes(8)));
  }

  @Test
  void permanentPlanningFailureNeedsResyncWithTheStreakIncremented() {
    TargetSnapshot after =
        TargetTransitions.planningFailed(
            target(TargetState.BACKFILLING, 0, null, null, null), "never", true, 0.5, T0);

    assertThat(after.state()).isEqualTo(TargetState.NEEDS_RESYNC);
    assertThat(after.consecutiveFailures()).isEqualTo(1);
    assertThat(after.nextAttemptAt()).isNull();
    assertThat(after.failing()).isTrue();
  }

  @Test
  void failedRunRaisesTheStreakToAtLeastThree() {
    assertThat(
            TargetTransitions.runFailed(
                    target(TargetState.BACKFILLING, 0, null, null, 9L), "x", 0.5, T0)
                .consecutiveFailures())
        .isEqualTo(3);
    assertThat(
            TargetTransitions.runFailed(
                    target(TargetState.BACKFILLING, 1, T0, null, 9L), "x", 0.5, T0)
                .consecutiveFailures())
        .isEqualTo(3);
    TargetSnapshot after =
        TargetTransitions.runFailed(
            target(TargetState.BACKFILLING, 4, T0.minusSeconds(60), null, 9L), "x", 0.5, T0);
    assertThat(after.consecutiveFailures()).isEqualTo(5);
    assertThat(after.firstFailedAt()).isEqualTo(T0.minusSeconds(60));
    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.currentRunId()).isNull();
    assertThat(after.nextAttemptAt()).isEqualTo(T0.plus(Duration.ofMinutes(8)));
  }

  @Test
  void aFailedRunIsTheOneToRetryAndARetryKeepsTheStreak() {
    TargetSnapshot failed =
        TargetTransitions.runFailed(
            target(TargetState.BACKFILLING, 0, null, null, 9L), "run 9 failed", 0.5, T0);
    assertThat(failed.retryRunId()).isEqualTo(9L);
    assertThat(failed.currentRunId()).isNull();

    TargetSnapshot retried =
        TargetTransitions.retried(
            TargetTransitions.backfilling(failed), 9L, T0.plus(Duration.ofMinutes(2)));

    assertThat(retried.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(retried.currentRunId()).isEqualTo(9L);
    assertThat(retried.consecutiveFailures()).isEqualTo(3);
    assertThat(retried.firstFailedAt()).isEqualTo(T0);
    assertThat(retried.lastAttemptAt()).isEqualTo(T0.plus(Duration.ofMinutes(2)));
    assertThat(retried.failing()).isTrue();
    // The retry failing again adds one (3, 4, 5, ...), and keeps the same run to retry.
    TargetSnapshot again = TargetTransitions.runFailed(retried, "run 9 failed", 0.5, T0);
    assertThat(again.consecutiveFailures()).isEqualTo(4);
    assertThat(again.retryRunId()).isEqualTo(9L);
  }

  @Test
  void aPlanSavedResetsTheStreakOnlyAfterPlanningFailures() {
    TargetSnapshot afterPlanningFailures = target(TargetState.BACKFILLING, 4, T0, T0, null);
    TargetSnapshot afterRunFailure =
        TargetTransitions.backfilling(
            TargetTransitions.runFailed(
                target(TargetState.BACKFILLING, 3, T0, null, 9L), "run 9 failed", 0.5, T0));

    TargetSnapshot planned = TargetTransitions.planned(afterPlanningFailures, 11L, T0);
    TargetSnapshot replacement = TargetTransitions.planned(afterRunFailure, 11L, T0);

    assertThat(planned.consecutiveFailures()).isZero();
    assertThat(planned.retryRunId()).isNull();
    assertThat(replacement.consecutiveFailures()).isEqualTo(4);
    assertThat(replacement.firstFailedAt()).isEqualTo(T0);
    assertThat(replacement.currentRunId()).isEqualTo(11L);
    assertThat(replacement.retryRunId()).isEqualTo(11L);
    // A batch of it completing is what resets the streak, and nothing is left to retry.
    TargetSnapshot progressed = TargetTransitions.progressed(replacement);
    assertThat(progressed.consecutiveFailures()).isZero();
    assertThat(progressed.retryRunId()).isNull();
  }

  @Test
  void neutralRevertKeepsStreakAnchorsAndError() {
    Instant first = T0.minusSeconds(100);
    Instant next = T0.plusSeconds(40);
    TargetSnapshot before = target(TargetState.BACKFILLING, 2, first, next, 9L);

    TargetSnapshot after = TargetTransitions.neutral(before);

    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.consecutiveFailures()).isEqualTo(2);
    assertThat(after.firstFailedAt()).isEqualTo(first);
    assertThat(after.nextAttemptAt()).isEqualTo(next);
    assertThat(after.lastError()).isEqualTo("old error");
    assertThat(after.currentRunId()).isNull();
  }

  @Test
  void progressAndPrimingResetTheStreak() {
    TargetSnapshot failing = target(TargetState.BACKFILLING, 5, T0, T0, 9L);

    TargetSnapshot progressed = TargetTransitions.progressed(failing);
    TargetSnapshot primed = TargetTransitions.primed(failing);

    for (TargetSnapshot after : new TargetSnapshot[] {progressed, primed}) {
      assertThat(after.consecutiveFailures()).isZero();
      assertThat(after.firstFailedAt()).isNull();
      assertThat(after.lastError()).isNull();
      assertThat(after.currentRunId()).isEqualTo(9L);
    }
    assertThat(progressed.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(primed.state()).isEqualTo(TargetState.PRIMED);
  }

  @Test
  void replanResetsEverythingAndIsDueAtOnce() {
    TargetSnapshot after =
        TargetTransitions.replanned(
            target(TargetState.NEEDS_RESYNC, 7, T0, T0.plusSeconds(600), 9L));

    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.consecutiveFailures()).isZero();
    assertThat(after.firstFailedAt()).isNull();
    assertThat(after.lastError()).isNull();
    assertThat(after.nextAttemptAt()).isNull();
    assertThat(after.currentRunId()).isNull();
    assertThat(after.queuedLiveBatches()).isEqualTo(2);
  }

  @Test
  void permanentLiveFailureNeedsResyncWithAStreakOfAtLeastThree() {
    TargetSnapshot after =
        TargetTransitions.liveFailed(target(TargetState.PRIMED, 0, null, null, 9L), "bad", T0);

    assertThat(after.state()).isEqualTo(TargetState.NEEDS_RESYNC);
    assertThat(after.consecutiveFailures()).isEqualTo(3);
    assertThat(after.firstFailedAt()).isEqualTo(T0);
    assertThat(after.lastError()).isEqualTo("bad");
  }

  @Test
  void wonCapacityRaceOnlyChangesTheState() {
    TargetSnapshot before = target(TargetState.PENDING_BACKFILL, 2, T0, T0, null);

    TargetSnapshot after = TargetTransitions.backfilling(before);

    assertThat(after.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(after.consecutiveFailures()).isEqualTo(2);
    assertThat(after.firstFailedAt()).isEqualTo(T0);
    assertThat(after.nextAttemptAt()).isEqualTo(T0);
  }
}
