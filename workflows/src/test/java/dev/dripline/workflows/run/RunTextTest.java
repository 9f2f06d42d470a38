package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RunTextTest {
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  private static final RunProgress PROGRESS =
      RunProgress.of(RunStatus.RUNNING, 400L, 40, START, null, START.plusSeconds(60));

  @Test
  void aHeldRunSaysWhatHoldsItAndSince() {
    String details =
        RunText.details(
            RunStatus.RUNNING,
            PROGRESS,
            1,
            2,
            null,
            null,
            List.of("brake", "replica-lag"),
            START.plusSeconds(30).toEpochMilli());

    assertThat(details)
        .isEqualTo(
            "running · 40 of 400 keys (10%) · 1 of 2 slots in use · throttled by brake,"
                + " replica-lag since 2026-01-01T00:00:30Z: no new batch starts");
  }

  @Test
  void aRunNothingHoldsOrThatIsNotRunningSaysNothingOfHolds() {
    assertThat(RunText.details(RunStatus.RUNNING, PROGRESS, 2, 2, null, null, List.of(), null))
        .isEqualTo("running · 40 of 400 keys (10%) · 2 of 2 slots in use");
    assertThat(
            RunText.details(RunStatus.PAUSED, PROGRESS, 0, 2, null, null, List.of("brake"), 1_000L))
        .doesNotContain("throttled");
  }
}
