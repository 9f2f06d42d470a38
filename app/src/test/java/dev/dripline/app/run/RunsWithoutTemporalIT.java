package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The API with Temporal unreachable (nothing listens on 127.0.0.1:1): what must not depend on
 * Temporal works, and what needs it fails with 503 leaving nothing half-written. Runs with live
 * workflows are tested end to end in the standalone module.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class RunsWithoutTemporalIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final String capped = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
    data.definition(capped, 10, 2);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(backfill, capped);
  }

  @Test
  void creatingARunWhenTemporalIsDownIs503AndLeavesNoRow() {
    Api.Reply reply =
        api.post("/api/runs", "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":5}}");

    assertThat(reply.status()).isEqualTo(503);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat((String) reply.object().get("detail")).contains("could not start");
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isZero();
  }

  @Test
  void aDuplicateOfAnActiveRunIs409NamingIt() {
    // Options as normalized by the validator: defaults applied, keys sorted.
    long existing = data.run(backfill, "running", "{\"items\":5,\"mode\":\"fast\",\"sleepMs\":0}");

    Api.Reply reply =
        api.post("/api/runs", "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":5}}");

    assertThat(reply.status()).isEqualTo(409);
    assertThat(reply.object()).containsEntry("existingRunId", (int) existing);
    assertThat((String) reply.object().get("detail")).contains("run " + existing);
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isEqualTo(1);
  }

  @Test
  void aRepeatedIdempotencyKeyReturnsTheOriginalRun() {
    long original = data.run(backfill, "running", "{\"items\":5,\"mode\":\"fast\",\"sleepMs\":0}");
    String key = "key-" + backfill;
    data.sql("update runs set idempotency_key = ? where id = ?", key, original);

    Api.Reply reply =
        api.post("/api/runs", "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":9}}", key);

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.location()).isEqualTo("/api/runs/" + original);
    assertThat(reply.object()).containsEntry("id", (int) original);
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isEqualTo(1);
  }

  /**
   * A pending run's stop may not fail (R2): with Temporal down its record keeps the request, the
   * answer is the stop's usual one, and the run counts as stopping. Its workflow ends it when a
   * worker's reconciler delivers the stop or its start time comes (WorkflowReconcilerIT,
   * RunActivitiesIT). A second stop is accepted too.
   */
  @Test
  void stoppingAPendingRunWhenTemporalIsDownIsAcceptedAndRecorded() {
    long id = data.run(backfill, "pending", "{\"items\":1}");

    Api.Reply reply = api.post("/api/runs/" + id + "/stop", "");
    Api.Reply again = api.post("/api/runs/" + id + "/stop", "");

    assertThat(reply.status()).isEqualTo(202);
    assertThat(again.status()).isEqualTo(202);
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo("pending");
    assertThat(
            data.count(
                "select count(*) from runs where id = ? and stop_requested_at is not null", id))
        .isEqualTo(1);
    // Recorded as stopping: a pause now is refused as for a live run being stopped.
    assertThat(api.post("/api/runs/" + id + "/pause", "").status()).isEqualTo(409);
  }

  /** A live run's stop needs its workflow: with Temporal down it is a 503 and nothing changes. */
  @ParameterizedTest(name = "stop a {0} run")
  @ValueSource(strings = {"running", "paused"})
  void stoppingALiveRunWhenTemporalIsDownIs503AndChangesNothing(String status) {
    long id = data.run(backfill, status, "{\"items\":1}");

    Api.Reply reply = api.post("/api/runs/" + id + "/stop", "");

    assertThat(reply.status()).isEqualTo(503);
    assertThat(
            data.count(
                "select count(*) from runs where id = ? and status = ?"
                    + " and stop_requested_at is null",
                id,
                status))
        .isEqualTo(1);
  }

  @ParameterizedTest(name = "stop a {0} run")
  @ValueSource(strings = {"completed", "failed", "stopped"})
  void stoppingATerminalRunIs409(String status) {
    long id = data.run(backfill, status, "{\"items\":1}");

    Api.Reply reply = api.post("/api/runs/" + id + "/stop", "");

    assertThat(reply.status()).isEqualTo(409);
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo(status);
  }

  @Test
  void retryingACompletedRunIs409() {
    long id = data.run(backfill, "completed", "{\"items\":1}");
    data.sql("update runs set plan_done = true where id = ?", id);
    data.batch(id, 1, 1, 1, "completed");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).isEqualTo(409);
  }

  @Test
  void retryingWithNothingToRequeueIs409AndChangesNothing() {
    long id = data.run(backfill, "failed", "{\"items\":1}");
    data.sql("update runs set plan_done = true, error = 'x' where id = ?", id);
    data.batch(id, 1, 1, 1, "completed");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).isEqualTo(409);
    assertThat((String) reply.object().get("detail")).contains("nothing to re-queue");
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo("failed");
  }

  /** A retry is the run workflow's to apply: no Temporal, 503, nothing re-queued. */
  @Test
  void retryingWhenTemporalIsDownIs503AndRequeuesNothing() {
    long id = data.run(backfill, "failed", "{\"items\":2}");
    data.sql("update runs set plan_done = true where id = ?", id);
    data.batch(id, 1, 1, 1, "completed");
    data.batch(id, 2, 2, 2, "failed");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).isEqualTo(503);
    assertThat((String) reply.object().get("detail")).contains("nothing was changed");
    assertThat(data.text("select status from batches where run_id = ? and number = 2", id))
        .isEqualTo("failed");
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo("failed");
  }

  /**
   * A stopped run's record keeps its stop until a retry re-queues; the stop is over, so the retry
   * is not refused as "stopping" — it goes to the workflow (here: no Temporal, 503).
   */
  @Test
  void aStoppedRunWhoseStopIsStillRecordedIsNotRefusedAsStopping() {
    long id = data.run(backfill, "stopped", "{\"items\":2}");
    data.sql("update runs set plan_done = true, stop_requested_at = now() where id = ?", id);
    data.batch(id, 1, 1, 1, "completed");
    data.batch(id, 2, 2, 2, "stopped");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).as("retry: %s", reply.object()).isEqualTo(503);
  }

  @Test
  void retryingAPendingRunIs409() {
    long id = data.run(backfill, "pending", "{\"items\":2}");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).isEqualTo(409);
    assertThat((String) reply.object().get("detail"))
        .isEqualTo("run " + id + " is pending and has nothing to re-queue");
  }

  /**
   * A retry while a stop is under way would be undone by the stop (its finish stops what the retry
   * re-queued): 409, and nothing is re-queued.
   */
  @Test
  void retryingARunThatIsStoppingIs409AndRequeuesNothing() {
    long id = data.run(backfill, "running", "{\"items\":2}");
    data.sql("update runs set plan_done = true, stop_requested_at = now() where id = ?", id);
    data.batch(id, 1, 1, 1, "running");
    data.batch(id, 2, 2, 2, "failed");

    Api.Reply reply = api.post("/api/runs/" + id + "/retry", "");

    assertThat(reply.status()).isEqualTo(409);
    assertThat((String) reply.object().get("detail"))
        .contains("run " + id + " is stopping; retry it once it has stopped");
    assertThat(data.text("select status from batches where run_id = ? and number = 2", id))
        .isEqualTo("failed");
  }

  @Test
  void stoppingALiveRunWhenTemporalIsDownIs503AndRecordsNoStop() {
    long id = data.run(backfill, "running", "{\"items\":1}");

    Api.Reply reply = api.post("/api/runs/" + id + "/stop", "");

    assertThat(reply.status()).isEqualTo(503);
    assertThat(data.text("select stop_requested_at::text from runs where id = ?", id)).isNull();
  }

  @Test
  void pausingARunThatHasEndedIs409() {
    long id = data.run(backfill, "completed", "{\"items\":1}");

    assertThat(api.post("/api/runs/" + id + "/pause", "").status()).isEqualTo(409);
  }

  @Test
  void resumingARunThatIsNotPausedIs409() {
    long id = data.run(backfill, "running", "{\"items\":1}");

    assertThat(api.post("/api/runs/" + id + "/resume", "").status()).isEqualTo(409);
  }

  @Test
  void changingTheCapOfATerminalRunIs409() {
    long id = data.run(backfill, "completed", "{\"items\":1}");

    Api.Reply reply = api.patch("/api/runs/" + id, "{\"maxParallelBatches\":5}");

    assertThat(reply.status()).isEqualTo(409);
  }

  @Test
  void changingTheCapWhenTemporalIsDownIs503AndChangesNothing() {
    long id = data.run(capped, "running", "{\"items\":1}");

    Api.Reply reply = api.patch("/api/runs/" + id, "{\"maxParallelBatches\":5}");

    assertThat(reply.status()).isEqualTo(503);
    assertThat(data.count("select max_parallel_batches from runs where id = ?", id)).isEqualTo(3);
    assertThat(data.text("select requested_max_parallel_batches::text from runs where id = ?", id))
        .isNull();
  }

  @ParameterizedTest(name = "delete a {0} run")
  @ValueSource(strings = {"pending", "completed", "failed", "stopped"})
  void deletingAPendingOrTerminalRunRemovesItAndLeavesItsBatchesToThePurge(String status) {
    long id = data.run(backfill, status, "{\"items\":1}");
    data.batch(id, 1, 1, 1, status.equals("pending") ? "pending" : "completed");

    Api.Reply first = api.delete("/api/runs/" + id);
    Api.Reply second = api.delete("/api/runs/" + id);

    assertThat(first.status()).isEqualTo(204);
    assertThat(second.status()).isEqualTo(404);
    assertThat(data.count("select count(*) from runs where id = ?", id)).isZero();
    // No purge runs without Temporal: the batches wait for it, recorded as due.
    assertThat(data.count("select count(*) from batches where run_id = ?", id)).isEqualTo(1);
    assertThat(data.count("select count(*) from run_purges where run_id = ?", id)).isEqualTo(1);
  }

  @ParameterizedTest(name = "delete a {0} run")
  @ValueSource(strings = {"running", "paused"})
  void deletingALiveRunIs409(String status) {
    long id = data.run(backfill, status, "{\"items\":1}");

    Api.Reply reply = api.delete("/api/runs/" + id);

    assertThat(reply.status()).isEqualTo(409);
    assertThat(data.count("select count(*) from runs where id = ?", id)).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stop", "retry", "pause", "resume"})
  void actionsOnAnUnknownRunAre404(String action) {
    assertThat(api.post("/api/runs/999999999/" + action, "").status()).isEqualTo(404);
    assertThat(api.post("/api/runs/abc/" + action, "").status()).isEqualTo(404);
  }

  @Test
  void changingOrDeletingAnUnknownRunIs404() {
    assertThat(api.patch("/api/runs/999999999", "{\"maxParallelBatches\":2}").status())
        .isEqualTo(404);
    assertThat(api.delete("/api/runs/999999999").status()).isEqualTo(404);
    assertThat(api.delete("/api/runs/abc").status()).isEqualTo(404);
  }

  @Test
  void healthIsDownWithBothComponentsWhenTemporalIsUnreachable() {
    Api.Reply reply = api.get("/health");

    assertThat(reply.status()).isEqualTo(503);
    @SuppressWarnings("unchecked")
    Map<String, Object> details = (Map<String, Object>) reply.object().get("details");
    assertThat(details).containsKeys("jdbc", "temporal");
    assertThat(((Map<?, ?>) details.get("temporal")).get("status")).isEqualTo("DOWN");
    assertThat(((Map<?, ?>) details.get("jdbc")).get("status")).isEqualTo("UP");
  }
}
