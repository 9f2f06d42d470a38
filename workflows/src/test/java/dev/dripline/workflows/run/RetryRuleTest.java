package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** R8's retry as a rule: what it touches, what it moves back to pending, when it re-opens. */
class RetryRuleTest {

  @Test
  void aPendingOrCompletedRunOrALiveRunBeingStoppedIsNotTouched() {
    assertThat(RetryRule.applies(RunStatus.PENDING, false)).isFalse();
    assertThat(RetryRule.applies(RunStatus.COMPLETED, false)).isFalse();
    assertThat(RetryRule.applies(RunStatus.RUNNING, true)).isFalse();
    assertThat(RetryRule.applies(RunStatus.PAUSED, true)).isFalse();
    assertThat(RetryRule.applies(RunStatus.RUNNING, false)).isTrue();
    // A stopped run's record keeps its stop until a retry: that stop is over.
    assertThat(RetryRule.applies(RunStatus.STOPPED, true)).isTrue();
    assertThat(RetryRule.applies(RunStatus.FAILED, false)).isTrue();
  }

  @Test
  void failedBatchesGoBackAndForAStoppedRunStoppedOnesToo() {
    assertThat(RetryRule.requeued(RunStatus.RUNNING)).containsExactly(BatchStatus.FAILED);
    assertThat(RetryRule.requeued(RunStatus.FAILED)).containsExactly(BatchStatus.FAILED);
    assertThat(RetryRule.requeued(RunStatus.STOPPED))
        .containsExactly(BatchStatus.FAILED, BatchStatus.STOPPED);
  }

  @Test
  void anEndedRunReopensWithBatchesToRunAgainOrUnplannedKeys() {
    assertThat(RetryRule.reopens(RunStatus.FAILED, 2, true)).isTrue();
    assertThat(RetryRule.reopens(RunStatus.STOPPED, 0, false)).isTrue();
    assertThat(RetryRule.reopens(RunStatus.FAILED, 0, true)).isFalse();
    assertThat(RetryRule.reopens(RunStatus.RUNNING, 3, false)).isFalse();
  }
}
