package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class RunProgressTest {
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void percentIsFlooredAndEtaFollowsThroughput() {
    RunProgress p =
        RunProgress.of(RunStatus.RUNNING, 300L, 199, START, null, START.plusSeconds(120));

    assertThat(p.percent()).isEqualTo(66);
    assertThat(p.elapsedSeconds()).isEqualTo(120);
    assertThat(p.throughputPerMinute()).isEqualTo(99.5);
    assertThat(p.etaSeconds()).isEqualTo(61);
  }

  @Test
  void unknownTotalGivesNoPercentAndNoEta() {
    RunProgress p = RunProgress.of(RunStatus.RUNNING, null, 50, START, null, START.plusSeconds(60));

    assertThat(p.percent()).isZero();
    assertThat(p.etaSeconds()).isNull();
    assertThat(p.throughputPerMinute()).isEqualTo(50);
  }

  @Test
  void completedIsAHundredPercentAndTheClockStopsAtTheFinish() {
    RunProgress p =
        RunProgress.of(
            RunStatus.COMPLETED, 10L, 10, START, START.plusSeconds(30), START.plusSeconds(999));

    assertThat(p.percent()).isEqualTo(100);
    assertThat(p.elapsedSeconds()).isEqualTo(30);
    assertThat(p.etaSeconds()).isNull();
  }

  @Test
  void percentIsCappedAtAHundredAndAnEmptyScopeIsDone() {
    assertThat(RunProgress.of(RunStatus.RUNNING, 10L, 12, START, null, START).percent())
        .isEqualTo(100);
    assertThat(RunProgress.of(RunStatus.RUNNING, 0L, 0, START, null, START).percent())
        .isEqualTo(100);
  }

  @Test
  void notStartedHasNoClock() {
    RunProgress p = RunProgress.of(RunStatus.PENDING, null, 0, null, null, START);

    assertThat(p.elapsedSeconds()).isNull();
    assertThat(p.throughputPerMinute()).isZero();
  }

  @Test
  void timeHeldIsNotProcessingTime() {
    // 120 s elapsed, 60 s of it held by holds that ended: 200 keys in 60 s of work.
    RunProgress p =
        RunProgress.of(
            RunStatus.RUNNING, 400L, 200, START, null, START.plusSeconds(120), 60_000, null);

    assertThat(p.elapsedSeconds()).isEqualTo(120);
    assertThat(p.throughputPerMinute()).isEqualTo(200);
    assertThat(p.etaSeconds()).isEqualTo(60);
  }

  @Test
  void aHoldThatLastsDoesNotWearTheThroughputDown() {
    Instant heldSince = START.plusSeconds(60);
    RunProgress early =
        RunProgress.of(
            RunStatus.RUNNING, 400L, 100, START, null, START.plusSeconds(90), 0, heldSince);
    RunProgress late =
        RunProgress.of(
            RunStatus.RUNNING, 400L, 100, START, null, START.plusSeconds(3600), 0, heldSince);

    assertThat(early.throughputPerMinute()).isEqualTo(100);
    assertThat(late.throughputPerMinute()).isEqualTo(100);
    assertThat(late.etaSeconds()).isEqualTo(early.etaSeconds()).isEqualTo(180);
    assertThat(late.elapsedSeconds()).isEqualTo(3600);
  }

  @Test
  void aHoldBeganAfterTheFinishOrAheadOfTheClockAddsNothing() {
    RunProgress p =
        RunProgress.of(
            RunStatus.RUNNING,
            400L,
            100,
            START,
            null,
            START.plusSeconds(60),
            0,
            START.plusSeconds(61));

    assertThat(p.throughputPerMinute()).isEqualTo(100);
  }
}
