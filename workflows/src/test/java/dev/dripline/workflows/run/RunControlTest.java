package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunControl.Request.CHANGE_CAP;
import static dev.dripline.workflows.run.RunControl.Request.DELETE;
import static dev.dripline.workflows.run.RunControl.Request.PAUSE;
import static dev.dripline.workflows.run.RunControl.Request.RESUME;
import static dev.dripline.workflows.run.RunControl.Request.RETRY;
import static dev.dripline.workflows.run.RunControl.Request.STOP;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.RunControl.Request;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RunControlTest {
  private static Set<Request> taken(RunStatus status, boolean stopping) {
    Set<Request> taken = EnumSet.noneOf(Request.class);
    for (Request request : Request.values()) {
      if (RunControl.refusal(7, request, status, stopping).isEmpty()) {
        taken.add(request);
      }
    }
    return taken;
  }

  @Test
  void eachStatusTakesTheRequestsTheSpecGivesIt() {
    assertThat(taken(RunStatus.PENDING, false))
        .containsExactlyInAnyOrder(STOP, RETRY, PAUSE, CHANGE_CAP, DELETE);
    assertThat(taken(RunStatus.RUNNING, false))
        .containsExactlyInAnyOrder(STOP, RETRY, PAUSE, CHANGE_CAP);
    assertThat(taken(RunStatus.PAUSED, false))
        .containsExactlyInAnyOrder(STOP, RETRY, RESUME, CHANGE_CAP);
    assertThat(taken(RunStatus.COMPLETED, false)).containsExactly(DELETE);
    assertThat(taken(RunStatus.FAILED, false)).containsExactlyInAnyOrder(RETRY, DELETE);
    assertThat(taken(RunStatus.STOPPED, false)).containsExactlyInAnyOrder(RETRY, DELETE);
  }

  @Test
  void aStoppingRunRefusesRetryAndPauseButTakesAnotherStop() {
    assertThat(taken(RunStatus.RUNNING, true)).containsExactlyInAnyOrder(STOP, CHANGE_CAP);
    assertThat(RunControl.refusal(7, RETRY, RunStatus.RUNNING, true))
        .contains("run 7 is stopping; retry it once it has stopped");
    assertThat(RunControl.refusal(7, PAUSE, RunStatus.RUNNING, true))
        .contains("run 7 is stopping; it cannot be paused");
  }

  @Test
  void aRefusalSaysWhatTheRunIs() {
    assertThat(RunControl.refusal(7, STOP, RunStatus.STOPPED, false))
        .contains("run 7 is already stopped");
    assertThat(RunControl.refusal(7, RETRY, RunStatus.COMPLETED, false))
        .contains("run 7 is completed; there is nothing to retry");
    assertThat(RunControl.refusal(7, RESUME, RunStatus.RUNNING, false))
        .contains("run 7 is running; only a paused run can be resumed");
    assertThat(RunControl.refusal(7, CHANGE_CAP, RunStatus.FAILED, false))
        .contains("run 7 is failed; its cap can no longer change");
    assertThat(RunControl.refusal(7, DELETE, RunStatus.PAUSED, false))
        .contains("run 7 is paused; stop it before deleting it");
  }

  @Test
  void aRetryRequeuesFailedBatchesAStoppedRunsStoppedOnesOrAnEndedRunsUnplannedKeys() {
    assertThat(RunControl.retryRequeues(RunStatus.RUNNING, true, 1, 0)).isTrue();
    assertThat(RunControl.retryRequeues(RunStatus.RUNNING, true, 0, 3)).isFalse();
    assertThat(RunControl.retryRequeues(RunStatus.RUNNING, false, 0, 0)).isFalse();
    assertThat(RunControl.retryRequeues(RunStatus.STOPPED, true, 0, 3)).isTrue();
    assertThat(RunControl.retryRequeues(RunStatus.FAILED, true, 0, 3)).isFalse();
    assertThat(RunControl.retryRequeues(RunStatus.FAILED, false, 0, 0)).isTrue();
    assertThat(RunControl.retryRequeues(RunStatus.PENDING, false, 0, 0)).isFalse();
    assertThat(RunControl.retryRequeues(RunStatus.COMPLETED, true, 2, 0)).isFalse();
    assertThat(RunControl.nothingToRequeue(7, RunStatus.FAILED))
        .isEqualTo("run 7 is failed and has nothing to re-queue");
    assertThat(RunControl.nothingToRequeue(7, RunStatus.COMPLETED))
        .isEqualTo("run 7 is completed; there is nothing to retry");
  }
}
