package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pools (P5) end to end: three runs of {@code example.sleep}, each with a cap of 4, draw from one
 * pool of 2, in an app JVM and a worker JVM ({@link FaultStack}) on real PostgreSQL and the
 * Temporal dev server. Every run makes progress before any completes (no run starves), all
 * complete, and the pool's witness ({@code example_pool_concurrency}) saw at most 2 batches
 * executing at once, and 2 at some moment; also while the worker is killed and restarted.
 */
class PoolsIT {
  private static final int RUNS = 3;
  private static final int CAP = 4;
  private static final int POOL_SIZE = 2;
  private static final int BATCHES = 24;
  private static final Duration AT_MOST = Duration.ofMinutes(5);

  private final String tag = "pools-" + UUID.randomUUID().toString().substring(0, 8);
  private final String pool = "pools-it-" + tag;
  private FaultStack stack;

  @AfterEach
  void stop() {
    if (stack != null) {
      stack.close();
    }
    TestDb.execute("delete from pools where name = ?", pool);
  }

  private FaultStack start() throws Exception {
    stack =
        new FaultStack(
                tag,
                TestDb.URL,
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                Map.of())
            .start();
    return stack;
  }

  @Test
  void threeRunsOfCap4ShareAPoolOf2AndAllComplete() throws Exception {
    Api api = start().api();
    createPool(api);
    List<Long> runs = createRuns(api);

    List<Long> progressBeforeFirstEnd = awaitAllProgressBeforeAnyCompletes(api, runs);

    for (long id : runs) {
      awaitCompleted(api, id);
    }
    assertThat(progressBeforeFirstEnd).allSatisfy(done -> assertThat(done).isPositive());
    assertPoolWitness(api);
  }

  @Test
  void threeRunsOfCap4ShareAPoolOf2ThroughWorkerKills() throws Exception {
    Api api = start().api();
    createPool(api);
    List<Long> runs = createRuns(api);

    for (int kill = 1; kill <= 2; kill++) {
      int threshold = kill * RUNS * BATCHES / 4;
      await()
          .atMost(AT_MOST)
          .pollInterval(Duration.ofMillis(50))
          .failFast("the worker died:\n" + stack.worker().tail(40), () -> !stack.worker().alive())
          .until(() -> completed(runs) >= threshold);
      stack.killWorker();
      stack.startWorker();
    }

    for (long id : runs) {
      awaitCompleted(api, id);
    }
    assertPoolWitness(api);
  }

  @Test
  void aPausedOrStoppedRunKeepsNoSlotFromTheOthers() throws Exception {
    Api api = start().api();
    createPool(api);
    List<Long> runs = createRuns(api);
    long paused = runs.get(1);
    long stopped = runs.get(2);

    await()
        .atMost(AT_MOST)
        .until(
            () -> "running".equals(api.get("/api/runs/" + paused).body().path("status").asText()));
    assertThat(api.post("/api/runs/" + paused + "/pause", Map.of()).status()).isEqualTo(202);
    assertThat(api.post("/api/runs/" + stopped + "/stop", Map.of()).status()).isEqualTo(202);

    awaitCompleted(api, runs.get(0));
    await()
        .atMost(AT_MOST)
        .until(
            () -> "stopped".equals(api.get("/api/runs/" + stopped).body().path("status").asText()));
    assertThat(api.get("/api/runs/" + paused).body().path("status").asText()).isEqualTo("paused");
    assertThat(api.post("/api/runs/" + paused + "/resume", Map.of()).status()).isEqualTo(202);
    awaitCompleted(api, paused);
    assertThat(
            stack
                .sql()
                .queryLong("select max_seen from example_pool_concurrency where pool = ?", pool))
        .isLessThanOrEqualTo(POOL_SIZE);
  }

  private void createPool(Api api) {
    Api.Response put = api.put("/api/pools/" + pool, Map.of("size", POOL_SIZE));
    assertThat(put.status()).as("put: %s", put.body()).isEqualTo(200);
  }

  private List<Long> createRuns(Api api) {
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < RUNS; i++) {
      Map<String, Object> options = new LinkedHashMap<>();
      options.put("items", BATCHES * 2);
      options.put("sleepMs", 150);
      options.put("faultTag", tag + "-" + i);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("backfill", "example.sleep");
      body.put("options", options);
      body.put("batchSize", 2);
      body.put("maxParallelBatches", CAP);
      body.put("pool", pool);
      Api.Response created = api.post("/api/runs", body);
      assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
      assertThat(created.body().path("pool").asText()).isEqualTo(pool);
      runs.add(created.id());
    }
    return runs;
  }

  /** Each run's completed batches when the first run completed. */
  private List<Long> awaitAllProgressBeforeAnyCompletes(Api api, List<Long> runs) {
    List<Long> seen = new ArrayList<>();
    await()
        .atMost(AT_MOST)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              seen.clear();
              boolean anyCompleted = false;
              for (long id : runs) {
                seen.add(completedOf(id));
                anyCompleted |=
                    stack
                            .sql()
                            .queryLong(
                                "select count(*) from runs where id = ? and status = 'completed'",
                                id)
                        > 0;
              }
              assertPoolNotExceeded(api);
              return anyCompleted;
            });
    return List.copyOf(seen);
  }

  private void assertPoolNotExceeded(Api api) {
    JsonNode pools = api.get("/api/pools").body();
    for (JsonNode each : pools) {
      if (each.path("name").asText().equals(pool)) {
        assertThat(each.path("inUse").asInt()).isLessThanOrEqualTo(POOL_SIZE);
      }
    }
  }

  private long completedOf(long id) {
    return stack
        .sql()
        .queryLong("select count(*) from batches where run_id = ? and status = 'completed'", id);
  }

  private long completed(List<Long> runs) {
    long total = 0;
    for (long id : runs) {
      total += completedOf(id);
    }
    return total;
  }

  private void awaitCompleted(Api api, long id) {
    await()
        .atMost(AT_MOST)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> "completed".equals(api.get("/api/runs/" + id).body().path("status").asText()));
    JsonNode run = api.get("/api/runs/" + id).body();
    assertThat(run.path("batchCounts").path("completed").asInt()).isEqualTo(BATCHES);
    assertThat(run.path("pool").asText()).isEqualTo(pool);
  }

  /** The witness saw at most the pool's size executing at once, and that many at some moment. */
  private void assertPoolWitness(Api api) {
    long maxSeen =
        stack.sql().queryLong("select max_seen from example_pool_concurrency where pool = ?", pool);
    assertThat(maxSeen).as("pool witness max_seen").isEqualTo(POOL_SIZE);
    JsonNode listed = null;
    for (JsonNode each : api.get("/api/pools").body()) {
      if (each.path("name").asText().equals(pool)) {
        listed = each;
      }
    }
    assertThat(listed).isNotNull();
    assertThat(listed.path("size").asInt()).isEqualTo(POOL_SIZE);
    assertThat(listed.path("inUse").asInt()).isZero();
    assertThat(listed.path("waiting").asInt()).isZero();
  }
}
