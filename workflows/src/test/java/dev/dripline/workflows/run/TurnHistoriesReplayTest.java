package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.temporal.common.WorkflowExecutionHistory;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Histories of {@link BackfillRunWorkflowTest}'s scenarios, some recorded before the workflow's
 * turns were rules ({@link TurnRules}), when a pending run's start, the hand-over at
 * continue-as-new and an ended run's wait for a retry were loops of their own, the others by
 * release 0.1.0's code: each replays against today's code without non-determinism — the same
 * commands, in the same order, at every pending start, pause before a start, stop before a start,
 * ended run's look, retry, window's end and continue-as-new.
 */
class TurnHistoriesReplayTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "scheduled-run-paused-past-its-start",
        "run-due-now-paused-with-its-start",
        "pending-run-stopped-before-its-start",
        "retry-update-of-a-pending-run",
        "paused-before-start-in-a-new-execution",
        "ended-run-continued-as-new-while-waiting-1",
        "ended-run-continued-as-new-while-waiting-2",
        "ended-run-deleted-while-waiting",
        "ended-run-retry-window-passed",
        "failed-run-revived-by-a-retry-signal",
        "resume-rejecting-a-continue-as-new-1",
        "resume-rejecting-a-continue-as-new-2",
        "resume-rejecting-a-continue-as-new-3",
      })
  void replaysWithoutNonDeterminism(String name) throws Exception {
    String resource = "histories/turns/" + name + ".json";
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as("recorded history %s", resource).isNotNull();
      Replays.replay(
          WorkflowExecutionHistory.fromJson(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
    }
  }
}
