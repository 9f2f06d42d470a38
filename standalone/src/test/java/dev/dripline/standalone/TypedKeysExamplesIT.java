package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.examples.ExampleSeeder;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The examples of keys of other types (K6 in docs/spec.md) end to end through HTTP, at cap 3: each
 * runs to {@code completed} with every row in scope processed once (checked in the example tables),
 * its batches' keys typed in {@code GET /api/runs/{id}/batches}; a dry run (K5) plans without
 * saving anything.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TypedKeysExamplesIT implements TestPropertyProvider {
  private static final String TAG = "it-" + UUID.randomUUID().toString().substring(0, 8);

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", "dripline-" + TAG);
  }

  @BeforeAll
  void connectAndSeed() throws Exception {
    api = new Api(server.getURI());
    TestDb.execute(
        "truncate example_accounts, example_order_lines, example_page_views, example_daily_views");
    try (Connection connection = DriverManager.getConnection(TestDb.URL, "dripline", "dripline")) {
      ExampleSeeder seeder = new ExampleSeeder(connection);
      seeder.ensureAccounts(2_000);
      seeder.ensureOrderLines(300);
      seeder.ensurePageViews(1_000);
    }
  }

  private static Map<String, Object> run(
      String backfill, int batchSize, Map<String, Object> options) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", backfill);
    Map<String, Object> withTag = new LinkedHashMap<>(options);
    withTag.put("faultTag", TAG);
    body.put("options", withTag);
    body.put("batchSize", batchSize);
    body.put("maxParallelBatches", 3);
    return body;
  }

  private JsonNode runToCompletion(Map<String, Object> body) {
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    long id = created.id();
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              String status = api.get("/api/runs/" + id).body().path("status").asText();
              assertThat(status).isNotIn("failed", "stopped");
              return status.equals("completed");
            });
    return api.get("/api/runs/" + id).body();
  }

  private List<JsonNode> batches(long id) {
    List<JsonNode> all = new ArrayList<>();
    for (int page = 0; ; page++) {
      JsonNode items =
          api.get("/api/runs/" + id + "/batches?size=200&page=" + page).body().path("items");
      items.forEach(all::add);
      if (items.size() < 200) {
        return all;
      }
    }
  }

  @Test
  void normalizeHandlesCompletesOverUuidKeysAfterADryRunThatSavedNothing() {
    long messy =
        TestDb.queryLong(
            "select count(*) from example_accounts where handle <> lower(trim(handle))");
    long runsBefore = TestDb.queryLong("select count(*) from runs");
    Map<String, Object> body = run("example.normalize-handles", 100, Map.of());

    Api.Response dry = api.post("/api/runs?dryRun=true", body);

    assertThat(dry.status()).as("dry run: %s", dry.body()).isEqualTo(200);
    assertThat(dry.body().path("wouldCreate").asBoolean()).isTrue();
    assertThat(dry.body().path("totalKeys").asLong()).isEqualTo(messy);
    assertThat(dry.body().path("totalKeysExact").asBoolean()).isTrue();
    assertThat(dry.body().path("batches").asLong()).isEqualTo((messy + 99) / 100);
    assertThat(dry.body().path("effectiveMaxParallelBatches").asInt()).isEqualTo(3);
    assertThat(dry.body().path("sampleBatches")).hasSize(5);
    assertThat(UUID.fromString(dry.body().path("firstKey").asText())).isNotNull();
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(runsBefore);

    JsonNode run = runToCompletion(body);

    long id = run.path("id").asLong();
    assertThat(run.path("progress").path("processedKeys").asLong()).isEqualTo(messy);
    assertThat(
            TestDb.queryLong(
                "select count(*) from example_accounts where handle <> lower(trim(handle))"))
        .isZero();
    List<JsonNode> batches = batches(id);
    assertThat(batches).hasSize((int) ((messy + 99) / 100));
    assertThat(batches.get(0).path("startKey").isTextual()).isTrue();
    for (int i = 0; i < 5; i++) {
      JsonNode sample = dry.body().path("sampleBatches").get(i);
      assertThat(sample.path("startKey"))
          .as("sample %d", i)
          .isEqualTo(batches.get(i).path("startKey"));
      assertThat(sample.path("endKey")).as("sample %d", i).isEqualTo(batches.get(i).path("endKey"));
      assertThat(sample.path("size").asInt()).as("sample %d", i).isEqualTo(100);
    }
    assertThat(dry.body().path("lastKey"))
        .isEqualTo(batches.get(batches.size() - 1).path("endKey"));
    assertThat(TestDb.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .isLessThanOrEqualTo(3);
  }

  @Test
  void orderLinesCoversEveryLineOnceWithBoundariesInsideOrders() {
    long lines = TestDb.queryLong("select count(*) from example_order_lines");

    JsonNode run = runToCompletion(run("example.order-lines", 7, Map.of()));

    long id = run.path("id").asLong();
    assertThat(run.path("progress").path("processedKeys").asLong()).isEqualTo(lines);
    assertThat(
            TestDb.queryLong(
                "select count(*) from example_order_lines"
                    + " where sku_normalized is distinct from upper(trim(sku))"))
        .isZero();
    List<JsonNode> batches = batches(id);
    assertThat(batches.get(0).path("startKey").toString()).isEqualTo("[1,1]");
    long splitOrders = 0;
    for (int i = 0; i + 1 < batches.size(); i++) {
      if (batches.get(i).path("endKey").get(0).asLong()
          == batches.get(i + 1).path("startKey").get(0).asLong()) {
        splitOrders++;
      }
    }
    assertThat(splitOrders).as("batch boundaries inside an order").isPositive();
    assertThat(batches.stream().mapToLong(b -> b.path("size").asLong()).sum()).isEqualTo(lines);
  }

  @Test
  void dailyViewsCountsEachDayInAWindowOfItsOwn() {
    JsonNode run =
        runToCompletion(
            run("example.daily-views", 1, Map.of("from", "2026-11-01", "to", "2026-11-20")));

    long id = run.path("id").asLong();
    assertThat(run.path("progress").path("totalKeys").asLong()).isEqualTo(20);
    assertThat(TestDb.queryLong("select count(*) from example_daily_views")).isEqualTo(20);
    assertThat(
            TestDb.queryLong(
                "select count(*) from example_daily_views d where d.views <> (select count(*)"
                    + " from example_page_views v where v.viewed_at >= d.day"
                    + " and v.viewed_at < d.day + 1)"))
        .isZero();
    List<JsonNode> batches = batches(id);
    assertThat(batches).hasSize(20);
    assertThat(batches.get(0).path("startKey").asText()).isEqualTo("2026-11-01");
    assertThat(batches.get(0).path("endKey").asText()).isEqualTo("2026-11-01");
    assertThat(batches.get(19).path("startKey").asText()).isEqualTo("2026-11-20");
  }

  @Test
  void aWindowIsAPositiveDurationOfWholeDaysForADateKey() {
    Map<String, Object> options = new java.util.HashMap<>();
    options.put("from", "2026-11-01");
    options.put("to", "2026-11-20");
    options.put("window", "PT0S");
    long runsBefore = TestDb.queryLong("select count(*) from runs");

    Api.Response zero = api.post("/api/runs", run("example.daily-views", 1, options));
    options.put("window", "-P1D");
    Api.Response negative =
        api.post("/api/runs?dryRun=true", run("example.daily-views", 1, options));
    options.put("window", "PT12H");
    Api.Response halfDay =
        api.post("/api/runs?dryRun=true", run("example.daily-views", 1, options));
    options.put("window", "P7D");
    Api.Response week = api.post("/api/runs?dryRun=true", run("example.daily-views", 1, options));

    assertThat(zero.status()).isEqualTo(400);
    assertThat(zero.body().toString()).contains("\"field\":\"options.window\"");
    assertThat(negative.status()).isEqualTo(400);
    assertThat(negative.body().toString()).contains("\"field\":\"options.window\"");
    assertThat(halfDay.status()).as("%s", halfDay.body()).isEqualTo(422);
    assertThat(halfDay.body().toString()).contains("not a whole number of days");
    assertThat(week.status()).as("%s", week.body()).isEqualTo(200);
    assertThat(week.body().path("batches").asLong()).isEqualTo(3);
    JsonNode first = week.body().path("sampleBatches").get(0);
    assertThat(first.path("startKey").asText()).isEqualTo("2026-11-01");
    assertThat(first.path("endKey").asText()).isEqualTo("2026-11-07");
    assertThat(week.body().path("lastKey").asText()).isEqualTo("2026-11-20");
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(runsBefore);
  }

  @Test
  void aDryRunIsValidatedAsACreateIs() {
    Api.Response unknown =
        api.post(
            "/api/runs?dryRun=true", Map.of("backfill", "example.no-such", "options", Map.of()));
    Api.Response badDate =
        api.post(
            "/api/runs?dryRun=true",
            run("example.daily-views", 1, Map.of("from", "2026-13-01", "to", "2026-11-20")));
    Api.Response badFlag =
        api.post("/api/runs?dryRun=maybe", run("example.order-lines", 7, Map.of()));
    Map<String, Object> inverted = Map.of("from", "2026-11-20", "to", "2026-11-01");
    long runsBefore = TestDb.queryLong("select count(*) from runs");
    Api.Response invertedDryRun =
        api.post("/api/runs?dryRun=true", run("example.daily-views", 1, inverted));
    Api.Response invertedRun = api.post("/api/runs", run("example.daily-views", 1, inverted));

    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.body().toString()).contains("\"field\":\"backfill\"");
    assertThat(badDate.status()).isEqualTo(400);
    assertThat(badDate.body().toString()).contains("options.from");
    assertThat(badFlag.status()).isEqualTo(400);
    assertThat(badFlag.body().toString()).contains("dryRun");
    for (Api.Response response : List.of(invertedDryRun, invertedRun)) {
      assertThat(response.status()).as("%s", response.body()).isEqualTo(400);
      assertThat(response.body().toString()).contains("\"field\":\"options.to\"");
    }
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(runsBefore);
  }
}
