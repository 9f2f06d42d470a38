package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.temporal.common.WorkflowExecutionHistory;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Replays histories of real runs — through the API, on PostgreSQL and the dev server, recorded once
 * by {@code RunHistoryRecording} (standalone) and checked in — against today's workflow code: stop,
 * a scheduled start, a planning failure, a retry (signal, then Update), a run revived by a new
 * execution, continue-as-new, a cap change (Update) and a stop that reaches a new execution before
 * it has loaded its run. A change to the commands a workflow emits that is not behind {@code
 * Workflow.getVersion} fails here before it meets a live execution. No test run records them again.
 */
class RecordedRunHistoriesReplayTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "real-run-stopped-while-running.json, stop",
    "real-run-scheduled-start.json, ",
    "real-run-planning-failed.json, ",
    "real-run-failed-and-retried.json, retry",
    "real-run-revived-by-signal-with-start.json, retry",
    "real-run-continued-as-new-1.json, ",
    "real-run-continued-as-new-2.json, ",
    "real-run-continued-as-new-3.json, ",
    "real-run-cap-changed-by-update.json, changeCap",
    "real-run-retried-by-update.json, retryRun",
    "real-run-revived-by-update-with-start.json, retryRun",
    "real-run-early-stop-in-a-new-execution.json, stop",
  })
  void replaysWithoutNonDeterminism(String file, String message) throws Exception {
    WorkflowExecutionHistory history = load("histories/" + file);
    if (message != null) {
      assertThat(history.getEvents())
          .as("%s holds the %s signal or Update it was recorded for", file, message)
          .anyMatch(
              e ->
                  (e.hasWorkflowExecutionSignaledEventAttributes()
                          && e.getWorkflowExecutionSignaledEventAttributes()
                              .getSignalName()
                              .equals(message))
                      || (e.hasWorkflowExecutionUpdateAcceptedEventAttributes()
                          && e.getWorkflowExecutionUpdateAcceptedEventAttributes()
                              .getAcceptedRequest()
                              .getInput()
                              .getName()
                              .equals(message)));
    }

    Replays.replay(history);
  }

  private WorkflowExecutionHistory load(String resource) throws Exception {
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
      assertThat(in).as("recorded history %s", resource).isNotNull();
      return WorkflowExecutionHistory.fromJson(
          new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}
