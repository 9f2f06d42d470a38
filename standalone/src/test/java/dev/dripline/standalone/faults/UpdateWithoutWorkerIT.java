package dev.dripline.standalone.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RunWorkflowIds;
import io.temporal.api.history.v1.HistoryEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A cap change — a Temporal Update, which needs a worker to answer — asked right after the only
 * worker was killed, while Temporal still lists it as polling: nothing is half-done.
 *
 * <p><b>Injects:</b> an app and a worker in JVMs of their own ({@code DRIPLINE_UPDATE_TIMEOUT} 3
 * s); a scheduled run; the worker killed with SIGKILL; a {@code PATCH} of the run's cap; a new
 * worker.
 *
 * <p><b>Asserts:</b> the {@code PATCH} is a 503 saying the workflow did not answer and that nothing
 * was changed; once the new worker has run the workflow (it answers the {@code progress} query),
 * the Update it found waiting was rejected by the workflow's validator — past its deadline — so the
 * record still has the old cap and the history no accepted Update; a cap change asked now is
 * answered 200 and recorded.
 */
class UpdateWithoutWorkerIT {
  private final String tag = "upd-" + UUID.randomUUID().toString().substring(0, 8);
  private final String queue = "dripline-" + tag;
  private final List<ChildJvm> processes = new ArrayList<>();

  @AfterEach
  void stopProcesses() {
    for (ChildJvm process : processes) {
      process.close();
    }
  }

  @Test
  void aCapChangeNoWorkerAnsweredIs503AndIsNotAppliedWhenAWorkerReturns() throws Exception {
    Map<String, String> env = Map.of("DRIPLINE_UPDATE_TIMEOUT", "3s");
    ChildJvm worker = AppProcess.startWorker("upd-worker-1", queue, env);
    processes.add(worker);
    ChildJvm app = AppProcess.start("upd-app", queue, env);
    processes.add(app);
    OperatorApi api = new OperatorApi(app.base());
    OperatorApi.Answer created =
        api.post(
            "/api/runs",
            Map.of(
                "backfill",
                "example.sleep",
                "options",
                Map.of("items", 4, "sleepMs", 0, "faultTag", tag),
                "maxParallelBatches",
                2,
                "startAt",
                Instant.now().plus(Duration.ofHours(1)).toString()),
            Map.of());
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    long id = created.id();
    String workflowId = RunWorkflowIds.forRun(id);
    try (TemporalProbe temporal = new TemporalProbe()) {
      BackfillRunWorkflow run =
          temporal.client().newWorkflowStub(BackfillRunWorkflow.class, workflowId);
      await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> run.progress() != null);

      worker.kill();
      OperatorApi.Answer patched = api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 1));

      assertThat(patched.status()).as("PATCH: %s", patched.body()).isEqualTo(503);
      assertThat(patched.body().path("detail").asText())
          .contains("did not answer")
          .contains("nothing was changed");

      processes.add(AppProcess.startWorker("upd-worker-2", queue, env));
      await().atMost(Duration.ofMinutes(2)).ignoreExceptions().until(() -> run.progress() != null);
      JsonNode record = api.getJson("/api/runs/" + id);
      assertThat(record.path("maxParallelBatches").asInt()).isEqualTo(2);
      assertThat(record.path("requestedMaxParallelBatches").asInt()).isEqualTo(2);
      for (HistoryEvent event : temporal.client().fetchHistory(workflowId).getEvents()) {
        assertThat(event.hasWorkflowExecutionUpdateAcceptedEventAttributes())
            .as("an Update accepted after its caller gave up: %s", event)
            .isFalse();
      }

      OperatorApi.Answer now = api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 1));
      assertThat(now.status()).as("PATCH with a worker: %s", now.body()).isEqualTo(200);
      assertThat(api.getJson("/api/runs/" + id).path("maxParallelBatches").asInt()).isEqualTo(1);
    }
  }
}
