package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.spi.Key;
import dev.dripline.store.db.Database;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Reads of runs and batches: detail, lists with filters and paging, 404s. */
@MicronautTest(transactional = false)
class RunQueriesIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final String other = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
    data.definition(other, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(backfill, other);
  }

  @Test
  void showsARunWithBatchCountsInFlightAndProgress() {
    long id = data.run(backfill, "running", "{\"items\":40,\"mode\":\"fast\"}");
    data.batches(id, "completed", "running", "enqueued", "pending");
    data.sql("update runs set total_keys = 40 where id = ?", id);
    data.sql("update run_key_counts set processed_keys = 10 where run_id = ? and shard = 1", id);

    Api.Reply reply = api.get("/api/runs/" + id);

    assertThat(reply.status()).isEqualTo(200);
    Map<String, Object> run = reply.object();
    assertThat(run)
        .containsEntry("id", (int) id)
        .containsEntry("backfill", backfill)
        .containsEntry("status", "running")
        .containsEntry("batchSize", 10)
        .containsEntry("maxParallelBatches", 3)
        .containsEntry("createdBy", "test")
        .containsEntry("workflowId", "dripline-run-" + id)
        .containsEntry("inFlight", 2)
        .containsEntry("options", Map.of("items", 40, "mode", "fast"));
    assertThat(run.get("batchCounts")).isEqualTo(counts(1, 1, 1, 1, 0, 0));
    @SuppressWarnings("unchecked")
    Map<String, Object> progress = (Map<String, Object>) run.get("progress");
    assertThat(progress)
        .containsEntry("totalKeys", 40)
        .containsEntry("processedKeys", 10)
        .containsEntry("percent", 25)
        .containsKeys("throughputPerMinute", "etaSeconds", "elapsedSeconds");
    assertThat(Instant.parse((String) run.get("createdAt"))).isBefore(Instant.now().plusSeconds(5));
    assertThat((String) run.get("startedAt")).endsWith("Z");
    assertThat(run.get("finishedAt")).isNull();
  }

  @Test
  void showsZeroForEveryBatchStatusOfARunWithoutBatches() {
    long id = data.run(backfill, "pending", "{\"items\":1}");

    Api.Reply reply = api.get("/api/runs/" + id);

    assertThat(reply.object().get("batchCounts")).isEqualTo(counts(0, 0, 0, 0, 0, 0));
    assertThat(reply.object()).containsEntry("inFlight", 0);
  }

  @Test
  void listsEachRunWithItsOwnBatchCounts() {
    long first = data.run(backfill, "failed", "{\"items\":40}");
    data.batches(first, "failed", "failed", "stopped", "pending");
    long second = data.run(backfill, "running", "{\"items\":41}");
    data.batches(second, "running", "pending", "pending", "enqueued");
    data.sql(
        "update run_key_counts k set processed_keys = v.keys, completed_batches = v.n"
            + " from (values (1, 20, 2), (2, 10, 1)) v (shard, keys, n)"
            + " where k.run_id = ? and k.shard = v.shard",
        second);

    Api.Reply all = api.get("/api/runs?backfill=" + backfill);

    assertThat(all.status()).isEqualTo(200);
    assertThat(ids(all)).containsExactly(second, first);
    assertThat(all.items().get(0).get("batchCounts")).isEqualTo(counts(2, 1, 1, 3, 0, 0));
    assertThat(all.items().get(1).get("batchCounts")).isEqualTo(counts(1, 0, 0, 0, 2, 1));
  }

  @Test
  void listsRunsNewestFirstWithFiltersAndPaging() {
    long first = data.run(backfill, "completed", "{\"items\":1}");
    long second = data.run(backfill, "failed", "{\"items\":2}");
    long third = data.run(backfill, "completed", "{\"items\":3}");
    long elsewhere = data.run(other, "completed", "{\"items\":4}");

    Api.Reply all = api.get("/api/runs?backfill=" + backfill);
    Api.Reply completed = api.get("/api/runs?backfill=" + backfill + "&status=completed");
    Api.Reply page1 = api.get("/api/runs?backfill=" + backfill + "&page=1&size=2");

    assertThat(all.status()).isEqualTo(200);
    assertThat(ids(all)).containsExactly(third, second, first);
    assertThat(all.object()).containsEntry("page", 0).containsEntry("size", 20);
    assertThat(all.object()).containsEntry("total", 3);
    assertThat(ids(completed)).containsExactly(third, first);
    assertThat(completed.object()).containsEntry("total", 2);
    assertThat(ids(page1)).containsExactly(first);
    assertThat(page1.object())
        .containsEntry("page", 1)
        .containsEntry("size", 2)
        .containsEntry("total", 3);
    assertThat(ids(api.get("/api/runs?backfill=" + other))).containsExactly(elsewhere);
    assertThat(all.items().get(0)).containsKeys("batchCounts", "progress", "inFlight");
  }

  @Test
  void listsBatchesInNumberOrderWithStatusFilterAndPaging() {
    long id = data.run(backfill, "running", "{\"items\":30}");
    data.batch(id, 3, 21, 30, "pending");
    data.batch(id, 1, 1, 10, "completed");
    data.batch(id, 2, 11, 20, "failed");
    data.sql(
        "update batches set error = 'boom', attempts = 3, finished_at = now() where run_id = ?"
            + " and number = 2",
        id);

    Api.Reply all = api.get("/api/runs/" + id + "/batches");
    Api.Reply failed = api.get("/api/runs/" + id + "/batches?status=failed");
    Api.Reply second = api.get("/api/runs/" + id + "/batches?page=1&size=1");

    assertThat(all.status()).isEqualTo(200);
    assertThat(all.items()).extracting(b -> b.get("number")).containsExactly(1, 2, 3);
    assertThat(all.object()).containsEntry("total", 3);
    assertThat(all.items().get(0))
        .containsEntry("startKey", 1)
        .containsEntry("endKey", 10)
        .containsEntry("size", 10)
        .containsEntry("status", "completed")
        .containsKeys("attempts", "error", "startedAt", "finishedAt");
    assertThat(failed.items()).hasSize(1);
    assertThat(failed.items().get(0))
        .containsEntry("number", 2)
        .containsEntry("error", "boom")
        .containsEntry("attempts", 3);
    assertThat(second.items()).extracting(b -> b.get("number")).containsExactly(2);
  }

  /**
   * Keys of other types show as K1 says (a tuple as an array, a uuid as its string), batches
   * written before typed keys (bigint columns only) still show theirs, and {@code ?key=} finds the
   * batch that holds a key — 400 for a key of the wrong type.
   */
  @Test
  void showsTypedKeysAndFindsTheBatchThatHoldsAKey() {
    String tuples = TestData.uniqueName();
    data.definition(
        tuples,
        "[{\"name\":\"order_id\",\"type\":\"bigint\"},{\"name\":\"line_no\",\"type\":\"integer\"}]");
    long id = data.run(tuples, "running", "{\"items\":30}");
    data.batch(id, 1, Key.of(1041L, 1), Key.of(1042L, 2), 5);
    data.batch(id, 2, Key.of(1042L, 3), Key.of(1050L, 1), 5);
    String uuids = TestData.uniqueName();
    data.definition(uuids, "[{\"name\":\"id\",\"type\":\"uuid\"}]");
    long uuidRun = data.run(uuids, "running", "{\"items\":30}");
    UUID low = UUID.fromString("0b6a3c4e-1f2d-4c5b-8a9e-0123456789ab");
    UUID high = UUID.fromString("f0000000-0000-0000-0000-000000000000");
    data.batch(uuidRun, 1, Key.of(low), Key.of(high), 2);

    Api.Reply all = api.get("/api/runs/" + id + "/batches");
    Api.Reply holding = api.get("/api/runs/" + id + "/batches?key=%5B1042,5%5D");
    Api.Reply between = api.get("/api/runs/" + id + "/batches?key=%5B1051,1%5D");
    Api.Reply wrongType = api.get("/api/runs/" + id + "/batches?key=%5B1042,%22x%22%5D");
    Api.Reply uuid = api.get("/api/runs/" + uuidRun + "/batches");
    Api.Reply catalogue = api.get("/api/backfills");

    assertThat(all.items().get(0))
        .containsEntry("startKey", List.of(1041, 1))
        .containsEntry("endKey", List.of(1042, 2));
    assertThat(holding.items()).extracting(b -> b.get("number")).containsExactly(2);
    assertThat(between.items()).as("%s", between).isEmpty();
    assertThat(wrongType.status()).isEqualTo(400);
    assertThat(wrongType.errorFields()).containsExactly("key");
    assertThat(wrongType.object().get("errors").toString()).contains("line_no");
    assertThat(uuid.items().get(0))
        .containsEntry("startKey", low.toString())
        .containsEntry("endKey", high.toString());
    assertThat(catalogue.list())
        .filteredOn(definition -> tuples.equals(definition.get("name")))
        .singleElement()
        .satisfies(
            definition ->
                assertThat(definition.get("key"))
                    .isEqualTo(
                        List.of(
                            Map.of("name", "order_id", "type", "bigint"),
                            Map.of("name", "line_no", "type", "integer"))));
    data.cleanUp(tuples, uuids);
  }

  /**
   * {@code ?key=} finds a text key's batch in the order planning cut the batches in, its column's
   * collation, not in the records' byte order: in ICU's English collation {@code apple, Banana,
   * cherry, Date} ascend, and batches of two hold {@code [apple, Banana]} and {@code [cherry,
   * Date]}, though {@code "Banana"} is below {@code "apple"} as bytes.
   */
  @Test
  void findsATextKeysBatchInItsColumnsCollation() {
    String words = TestData.uniqueName();
    String table = "run_queries_it_words";
    data.sql("drop table if exists " + table);
    data.sql("create table " + table + " (word text collate \"en-x-icu\" primary key)");
    data.tableDefinition(words, "[{\"name\":\"word\",\"type\":\"text\"}]", table);
    long id = data.run(words, "running", "{\"items\":30}");
    data.batch(id, 1, Key.of("apple"), Key.of("Banana"), 2);
    data.batch(id, 2, Key.of("cherry"), Key.of("Date"), 2);
    Map<String, List<Object>> found = new LinkedHashMap<>();

    for (String word :
        List.of("apple", "avocado", "Banana", "cherry", "Cherry", "Date", "aa", "bz", "Zebra")) {
      Api.Reply reply =
          api.get(
              "/api/runs/"
                  + id
                  + "/batches?key="
                  + URLEncoder.encode("\"" + word + "\"", StandardCharsets.UTF_8));
      assertThat(reply.status()).as(word).isEqualTo(200);
      found.put(word, reply.items().stream().map(batch -> batch.get("number")).toList());
    }

    assertThat(found)
        .containsEntry("apple", List.of(1))
        .containsEntry("avocado", List.of(1))
        .containsEntry("Banana", List.of(1))
        .containsEntry("cherry", List.of(2))
        .containsEntry("Cherry", List.of(2))
        .containsEntry("Date", List.of(2))
        .as("below the first batch, between two, above the last")
        .containsEntry("aa", List.of())
        .containsEntry("bz", List.of())
        .containsEntry("Zebra", List.of());
    data.cleanUp(words);
    data.sql("drop table " + table);
  }

  @ParameterizedTest(name = "GET {0}")
  @ValueSource(
      strings = {
        "/api/runs/999999999",
        "/api/runs/abc",
        "/api/runs/-1",
        "/api/runs/99999999999999999999",
        "/api/runs/999999999/batches",
        "/api/runs/abc/batches"
      })
  void answersNotFoundForRunsThatDoNotExist(String path) {
    Api.Reply reply = api.get(path);

    assertThat(reply.status()).isEqualTo(404);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.object()).containsEntry("status", 404).containsKey("detail");
  }

  @Test
  void answersNotFoundForAnUnknownRoute() {
    Api.Reply reply = api.get("/api/nothing-here");

    assertThat(reply.status()).isEqualTo(404);
    assertThat(reply.contentType()).startsWith("application/problem+json");
  }

  @SuppressWarnings("unchecked")
  private static List<Long> ids(Api.Reply reply) {
    return reply.items().stream().map(item -> ((Number) item.get("id")).longValue()).toList();
  }

  /** A run's {@code batchCounts} as the API shows them: every status, zero included. */
  private static Map<String, Integer> counts(
      int pending, int enqueued, int running, int completed, int failed, int stopped) {
    return Map.of(
        "pending", pending,
        "enqueued", enqueued,
        "running", running,
        "completed", completed,
        "failed", failed,
        "stopped", stopped);
  }
}
