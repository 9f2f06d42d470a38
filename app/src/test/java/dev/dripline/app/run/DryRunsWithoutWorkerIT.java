package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionMetadata;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Dry runs against a real Temporal server ({@code DRIPLINE_TEST_TEMPORAL_ADDRESS}) with no worker
 * on the task queue: each is a {@code DryRun} workflow nobody answers, which the API waits for
 * without a database connection and which ends by itself at the dry-run timeout. Skipped when no
 * server answers.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.task-queue", value = DryRunsWithoutWorkerIT.QUEUE)
@Property(name = "dripline.api.dry-run-timeout", value = "15s")
@Property(name = "datasources.default.maximum-pool-size", value = "2")
@Property(name = "datasources.default.minimum-idle", value = "1")
@Property(name = "datasources.default.connection-timeout", value = "3000")
@Property(name = "micronaut.http.client.read-timeout", value = "60s")
class DryRunsWithoutWorkerIT {
  static final String QUEUE = "dripline-app-it-dry-runs-no-worker";

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;
  @Inject WorkflowClient workflows;
  @Inject TemporalConfig temporal;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final ExecutorService callers = Executors.newCachedThreadPool();

  @BeforeEach
  void setUp() {
    assumeTrue(
        TestData.reachable(temporal.address()), "no Temporal server at " + temporal.address());
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, 2);
  }

  @AfterEach
  void tearDown() {
    callers.shutdownNow();
    if (data != null) {
      data.cleanUp(backfill);
    }
  }

  private Api.Reply dryRun() {
    return api.post(
        "/api/runs?dryRun=true", "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":5}}");
  }

  private List<WorkflowExecutionMetadata> dryRunExecutions(String status) {
    return workflows
        .listExecutions(
            "TaskQueue = '"
                + QUEUE
                + "' AND WorkflowType = 'DryRun' AND DriplineBackfill = '"
                + backfill
                + "' AND ExecutionStatus = '"
                + status
                + "'")
        .toList();
  }

  /** Polls {@code condition} for up to 30 s (visibility lags the executions a little). */
  private static void awaitUntil(BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 30 s").isLessThan(deadline);
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void aDryRunNoWorkerAnswersIs503AndItsWorkflowEndsAtTheTimeout() {
    Api.Reply reply = dryRun();

    assertThat(reply.status()).as("%s", reply.body()).isEqualTo(503);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.object().get("detail"))
        .isEqualTo("no worker that hosts " + backfill + " answered the dry run within 15 s");
    awaitUntil(() -> dryRunExecutions("TimedOut").size() == 1);
    assertThat(dryRunExecutions("Running")).isEmpty();
    String workflowId = dryRunExecutions("TimedOut").get(0).getExecution().getWorkflowId();
    assertThat(workflows.newUntypedWorkflowStub(workflowId).describe().getStaticSummary())
        .isEqualTo("dry run of " + backfill + " · batch size 10");
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isZero();
  }

  /** More dry runs wait than the pool has connections, and the API still reads the database. */
  @Test
  void waitingDryRunsHoldNoDatabaseConnection() {
    List<CompletableFuture<Api.Reply>> waiting = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      waiting.add(CompletableFuture.supplyAsync(this::dryRun, callers));
    }
    awaitUntil(() -> dryRunExecutions("Running").size() == 6);

    Api.Reply list = api.get("/api/runs?backfill=" + backfill);

    assertThat(waiting).noneMatch(CompletableFuture::isDone);
    assertThat(list.status()).as("%s", list.body()).isEqualTo(200);
    assertThat(waiting.stream().map(CompletableFuture::join).map(Api.Reply::status))
        .containsOnly(503);
  }
}
