package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A run recorded in PostgreSQL whose workflow was never started — as when the app dies between the
 * two — is picked up by the worker's reconciler and completes (spec R12).
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReconcilerIT implements TestPropertyProvider {
  private static final String TAG = "reconcile-" + UUID.randomUUID().toString().substring(0, 8);

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue", "dripline-" + TAG,
        "dripline.worker.reconcile", "true",
        "dripline.worker.reconcile-interval", "1s");
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @Test
  void runRecordedWithoutAWorkflowIsStartedAndCompletes() {
    String options = "{\"faultTag\":\"" + TAG + "\",\"items\":20,\"sleepMs\":0}";
    long id =
        TestDb.queryLong(
            // The engine's cap comes from requested_max_parallel_batches (the run's request);
            // without it the run ran at the safety cap, and a claim of all 4 batches at once broke
            // the witness's bound of 2 whenever planning finished before the first claim.
            "insert into runs (backfill, options, options_key, batch_size, max_parallel_batches,"
                + " requested_max_parallel_batches, status, created_by, created_at)"
                + " values ('example.sleep', ?::jsonb, ?, 5, 2, 2, 'pending', 'test',"
                + " now() - interval '2 minutes') returning id",
            options,
            options);

    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> "completed".equals(api.get("/api/runs/" + id).body().path("status").asText()));

    assertThat(api.get("/api/runs/" + id).body().path("progress").path("processedKeys").asLong())
        .isEqualTo(20);
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isBetween(1L, 2L);
  }
}
