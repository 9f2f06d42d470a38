package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Batch-size tuning (P4) end to end through HTTP, on real PostgreSQL and the Temporal dev server
 * with the app and a worker in this JVM: a run of {@code example.sleep} whose batches sleep 1 ms
 * per key, tuned to 200 ms, starts at its batch size and is cut to larger batches as its measured
 * batches come in, never jumping more than ×1.5 between two batches, within its bounds. Asserted on
 * the sizes PostgreSQL recorded, never on how fast anything ran.
 *
 * <p>Chains on (the default), with pages of 4 batches and a cap of 2, so planning keeps a window of
 * 32 batches ahead of the chains (16 per slot) and each step is taken a few batches after the
 * measurements that call for it.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BatchTuningIT implements TestPropertyProvider {
  private static final String TAG = "tune-" + UUID.randomUUID().toString().substring(0, 8);

  /** Generous bounds for what a busy machine may delay; none is a measured figure. */
  private static final Duration AT_MOST = Duration.ofMinutes(3);

  private static final int START = 10;
  private static final int MIN = 10;
  private static final int MAX = 150;

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue",
        "dripline-" + TAG,
        "dripline.engine.plan-page-batches",
        "4");
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @Test
  void aTunedRunsBatchesGrowTowardTheTargetNeverJumpingMoreThanHalfWithinTheirBounds() {
    Api.Response created = api.post("/api/runs", tunedRun(12_000, START, "grow"));
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    long id = created.id();
    assertThat(created.body().path("targetBatchDuration").asText()).isEqualTo("PT0.2S");
    assertThat(created.body().path("minBatchSize").asInt()).isEqualTo(MIN);
    assertThat(created.body().path("maxBatchSize").asInt()).isEqualTo(MAX);
    assertThat(created.body().path("currentBatchSize").asInt()).isEqualTo(START);

    await().atMost(AT_MOST).until(() -> "completed".equals(run(id).path("status").asText()));

    List<Long> sizes =
        TestDb.queryLongs("select size from batches where run_id = ? order by number", id);
    assertThat(sizes.stream().mapToLong(Long::longValue).sum()).isEqualTo(12_000);
    assertThat(sizes.get(0))
        .as("the first batches are cut to the run's batch size")
        .isEqualTo(START);
    // Every batch but the run's last (which holds what is left) is within the bounds, and no
    // batch is more than 1.5 times larger or smaller than the one before.
    List<Long> full = sizes.subList(0, sizes.size() - 1);
    assertThat(full).allSatisfy(size -> assertThat(size).isBetween((long) MIN, (long) MAX));
    for (int i = 1; i < full.size(); i++) {
      long before = full.get(i - 1);
      long size = full.get(i);
      assertThat(size * 2)
          .as("batch %d: %d after %d (sizes %s)", i + 1, size, before, sizes)
          .isLessThanOrEqualTo(before * 3);
      assertThat(before * 2)
          .as("batch %d: %d after %d (sizes %s)", i + 1, size, before, sizes)
          .isLessThanOrEqualTo(size * 3);
    }
    // 10 keys take about 10 ms where 200 ms is the target: the sizes grow, whatever each batch's
    // overhead (200 ms minus it, over 1 ms per key, is far above 50 on any machine that runs this).
    assertThat(full.stream().mapToLong(Long::longValue).max().orElseThrow())
        .as("sizes %s", sizes)
        .isGreaterThanOrEqualTo(50);
    assertThat(sizes.stream().distinct().count()).as("sizes %s", sizes).isGreaterThan(3);

    JsonNode done = run(id);
    long recorded = TestDb.queryLong("select current_batch_size from runs where id = ?", id);
    assertThat(done.path("currentBatchSize").asLong()).isEqualTo(recorded);
    assertThat(recorded).isBetween((long) MIN, (long) MAX).isGreaterThanOrEqualTo(50);
  }

  @Test
  void theDryRunReportsTheStartingSizeWithinTheBounds() {
    Map<String, Object> body = tunedRun(1_000, 4, "dry");
    Api.Response dry = api.post("/api/runs?dryRun=true", body);

    assertThat(dry.status()).as("dry run: %s", dry.body()).isEqualTo(200);
    assertThat(dry.body().path("startingBatchSize").asInt()).isEqualTo(MIN);
    assertThat(dry.body().path("batches").asLong()).isEqualTo(100);
    assertThat(dry.body().path("sampleBatches").get(0).path("size").asInt()).isEqualTo(MIN);
    assertThat(
            TestDb.queryLong(
                "select count(*) from runs where options ->> 'faultTag' = ?", TAG + "-dry"))
        .isZero();
  }

  @Test
  void theCatalogueShowsTheDefinitionsTuningAndAnUntunedRunShowsItsBatchSize() {
    JsonNode sleep = null;
    for (JsonNode definition : api.get("/api/backfills").body()) {
      if (definition.path("name").asText().equals("example.sleep")) {
        sleep = definition;
      }
    }
    assertThat(sleep).isNotNull();
    assertThat(sleep.has("targetBatchDuration")).isTrue();
    assertThat(sleep.path("targetBatchDuration").isNull()).isTrue();
    assertThat(sleep.path("minBatchSize").isNull()).isTrue();

    Map<String, Object> untuned = new LinkedHashMap<>(tunedRun(20, 5, "plain"));
    untuned.remove("targetBatchDuration");
    untuned.remove("minBatchSize");
    untuned.remove("maxBatchSize");
    Api.Response created = api.post("/api/runs", untuned);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    assertThat(created.body().path("targetBatchDuration").isNull()).isTrue();
    assertThat(created.body().path("currentBatchSize").asInt()).isEqualTo(5);
    long id = created.id();
    await().atMost(AT_MOST).until(() -> "completed".equals(run(id).path("status").asText()));
    assertThat(TestDb.queryLongs("select size from batches where run_id = ? order by number", id))
        .containsOnly(5L);
    assertThat(
            TestDb.queryLong(
                "select count(*) from runs where id = ? and current_batch_size is null", id))
        .isEqualTo(1);
  }

  private Map<String, Object> tunedRun(int items, int batchSize, String tag) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("items", items);
    options.put("sleepMsPerKey", 1);
    options.put("faultTag", TAG + "-" + tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", options);
    body.put("batchSize", batchSize);
    body.put("maxParallelBatches", 2);
    body.put("targetBatchDuration", "PT0.2S");
    body.put("minBatchSize", MIN);
    body.put("maxBatchSize", MAX);
    return body;
  }

  private JsonNode run(long id) {
    return api.get("/api/runs/" + id).body();
  }
}
