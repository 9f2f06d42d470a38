package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.workflows.run.RunWorkflowIds;
import io.micronaut.context.annotation.Value;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The audit trail (O4) of signals and Updates sent to a run's workflow with the real Temporal CLI
 * (env {@code TEMPORAL_CLI}; {@code temporal workflow signal} without input, {@code temporal
 * workflow update execute --name changeCap}, as an operator types them): the workflow records each
 * as sent by {@code temporal}, with whether it took or ignored it, while the API's own signals and
 * Updates are recorded once, by the API, as the caller's.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AuditSignalsIT implements TestPropertyProvider {
  private static final String TAG = "audit-" + UUID.randomUUID().toString().substring(0, 8);

  @Inject EmbeddedServer server;

  @Value("${dripline.temporal.address}")
  String temporalAddress;

  @Value("${dripline.temporal.namespace:default}")
  String namespace;

  private Api api;
  private Api viewer;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", "dripline-" + TAG);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
    viewer = new Api(server.getURI(), "dev-viewer");
  }

  @Test
  void requestsFromTheTemporalCliAreAuditedAsTemporalsAndTheApisAsTheOperators() throws Exception {
    long id = slowRun();
    awaitStatus(id, "running");

    signal(id, "pause");
    awaitStatus(id, "paused");
    JsonNode pause = awaitEntry(id, "temporal", "run.pause");
    assertThat(api.patch("/api/runs/" + id, Map.of("maxParallelBatches", 2)).status())
        .isEqualTo(200);
    temporal(
        "workflow",
        "update",
        "execute",
        "--workflow-id",
        RunWorkflowIds.forRun(id),
        "--name",
        "changeCap",
        "--input",
        "{\"maxParallelBatches\": 3}");
    JsonNode cap = awaitEntry(id, "temporal", "run.cap");
    assertThat(api.post("/api/runs/" + id + "/resume", Map.of()).status()).isEqualTo(202);
    awaitStatus(id, "running");
    // Taken after the API's resume (signals are handled in order), so that one is recorded by now
    // if the workflow were to record it: it must not.
    signal(id, "resume");
    JsonNode ignored = awaitEntry(id, "temporal", "run.resume");
    signal(id, "stop");
    awaitStatus(id, "stopped");
    awaitEntry(id, "temporal", "run.stop");

    assertThat(pause.path("outcome").asText()).isEqualTo("accepted");
    assertThat(pause.path("status").isNull()).isTrue();
    assertThat(pause.path("problem").isNull()).isTrue();
    assertThat(cap.path("outcome").asText()).isEqualTo("accepted");
    assertThat(cap.path("detail").asText()).isEqualTo("{\"maxParallelBatches\":3}");
    assertThat(ignored.path("outcome").asText()).isEqualTo("ignored");
    assertThat(ignored.path("problem").asText()).contains("not paused");
    List<String> trail = new ArrayList<>();
    for (JsonNode entry : trail(id).path("items")) {
      trail.add(entry.path("actor").asText() + " " + entry.path("action").asText());
    }
    assertThat(trail)
        .containsExactly(
            "temporal run.stop",
            "temporal run.resume",
            "operator run.resume",
            "temporal run.cap",
            "operator run.cap",
            "temporal run.pause",
            "operator run.create");
  }

  private long slowRun() {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", 400);
    options.put("sleepMs", 200);
    options.put("faultTag", TAG);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", 2);
    body.put("maxParallelBatches", 1);
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    return created.id();
  }

  /** Sends signal {@code name} to the run with the Temporal CLI, without input. */
  private void signal(long id, String name) throws IOException, InterruptedException {
    temporal("workflow", "signal", "--workflow-id", RunWorkflowIds.forRun(id), "--name", name);
  }

  /** Runs the Temporal CLI with {@code arguments} against the test's server; it must succeed. */
  private void temporal(String... arguments) throws IOException, InterruptedException {
    String cli = System.getenv("TEMPORAL_CLI");
    assertThat(cli).as("env TEMPORAL_CLI (set by bin/dripline-test)").isNotBlank();
    List<String> command = new ArrayList<>(List.of(arguments));
    command.addAll(0, List.of(cli));
    command.addAll(List.of("--address", temporalAddress, "--namespace", namespace));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("temporal %s ended", command).isTrue();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("temporal %s: %s", command, output).isZero();
  }

  private JsonNode trail(long id) {
    Api.Response reply = viewer.get("/api/audit?run=" + id);
    assertThat(reply.status()).isEqualTo(200);
    return reply.body();
  }

  /** The newest entry of the run's trail by {@code actor} for {@code action}, once there is one. */
  private JsonNode awaitEntry(long id, String actor, String action) {
    JsonNode[] found = new JsonNode[1];
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              for (JsonNode entry : trail(id).path("items")) {
                if (entry.path("actor").asText().equals(actor)
                    && entry.path("action").asText().equals(action)) {
                  found[0] = entry;
                  return true;
                }
              }
              return false;
            });
    return found[0];
  }

  private void awaitStatus(long id, String status) {
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> status.equals(api.get("/api/runs/" + id).body().path("status").asText()));
  }
}
