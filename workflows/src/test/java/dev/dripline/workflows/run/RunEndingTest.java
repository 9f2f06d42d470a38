package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RunEndingTest {

  @Test
  void aRunWithABatchInFlightOrWaitingGoesOnWhateverWasAsked() {
    assertThat(RunEnding.of(false, null, true, 1, 0)).isEmpty();
    assertThat(RunEnding.of(true, null, true, 1, 0)).isEmpty();
    assertThat(RunEnding.of(false, "planning failed", false, 3, 0)).isEmpty();
  }

  @Test
  void unplannedKeysAreWorkStillToDo() {
    assertThat(RunEnding.of(false, null, false, 0, 0)).isEmpty();
    assertThat(RunEnding.of(false, null, false, 0, 2)).isEmpty();
  }

  @Test
  void aStopEndsTheRunStoppedBeforeItsPlanIsDoneAndOverFailures() {
    assertThat(RunEnding.of(true, null, false, 0, 0))
        .contains(new RunEnding(RunStatus.STOPPED, null));
    assertThat(RunEnding.of(true, null, true, 0, 4))
        .contains(new RunEnding(RunStatus.STOPPED, null));
  }

  @Test
  void aRunLevelErrorFailsTheRunWithItsText() {
    assertThat(RunEnding.of(false, "scope query failed", false, 0, 0))
        .contains(new RunEnding(RunStatus.FAILED, "scope query failed"));
  }

  @Test
  void failedBatchesFailAFinishedPlanAndAreCountedInTheError() {
    assertThat(RunEnding.of(false, null, true, 0, 1))
        .contains(new RunEnding(RunStatus.FAILED, "1 batch failed"));
    assertThat(RunEnding.of(false, null, true, 0, 7))
        .contains(new RunEnding(RunStatus.FAILED, "7 batches failed"));
  }

  @Test
  void aFinishedPlanWithEveryBatchDoneCompletes() {
    assertThat(RunEnding.of(false, null, true, 0, 0))
        .contains(new RunEnding(RunStatus.COMPLETED, null));
  }
}
