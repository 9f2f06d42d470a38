package dev.dripline.app.targets;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The targets API with Temporal unreachable (nothing listens on 127.0.0.1:1), over rows arranged
 * directly in PostgreSQL: reads, the failing and blocked figures, live batches, replan and delete
 * all work from the record; creating a target needs its workflow and fails with 503 leaving nothing
 * behind.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class TargetsWithoutTemporalIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final List<String> targets = new ArrayList<>();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUpTargets(targets.toArray(String[]::new));
    data.cleanUp(backfill);
  }

  @Test
  void creatingATargetWhenTemporalIsDownIs503AndLeavesNoRow() {
    String name = newName();

    Api.Reply reply = api.post("/api/targets", TestData.targetBody(name, backfill, 5));

    assertThat(reply.status()).isEqualTo(503);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat((String) reply.object().get("detail")).contains("could not start");
    assertThat(data.count("select count(*) from targets where name = ?", name)).isZero();
  }

  @Test
  void anExistingNameIs409AndChangesNothing() {
    String name = newName();
    data.target(name, backfill, "primed", 0);

    Api.Reply reply = api.post("/api/targets", TestData.targetBody(name, backfill, 9));

    assertThat(reply.status()).isEqualTo(409);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(data.text("select state from targets where name = ?", name)).isEqualTo("primed");
    assertThat(data.text("select options->>'items' from targets where name = ?", name))
        .isEqualTo("5");
  }

  @Test
  void aTargetShowsExactlyTheDocumentedFields() {
    String name = newName();
    data.target(name, backfill, "pending_backfill", 0);
    data.sql("update targets set group_name = 'org-1' where name = ?", name);

    Api.Reply reply = api.get("/api/targets/" + name);

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.object().keySet())
        .containsExactlyInAnyOrder(
            "name",
            "backfill",
            "options",
            "group",
            "state",
            "consecutiveFailures",
            "firstFailedAt",
            "lastAttemptAt",
            "nextAttemptAt",
            "lastError",
            "failing",
            "currentRunId",
            "blockedLiveBatches",
            "oldestBlockedAgeSeconds",
            "createdAt",
            "updatedAt");
    assertThat(reply.object())
        .containsEntry("name", name)
        .containsEntry("backfill", backfill)
        .containsEntry("options", Map.of("items", 5, "mode", "fast", "sleepMs", 0))
        .containsEntry("group", "org-1")
        .containsEntry("state", "pending_backfill")
        .containsEntry("consecutiveFailures", 0)
        .containsEntry("failing", false)
        .containsEntry("currentRunId", null)
        .containsEntry("blockedLiveBatches", 0)
        .containsEntry("oldestBlockedAgeSeconds", null);
  }

  @Test
  void aFailingTargetWithQueuedLiveBatchesShowsThemBlocked() {
    String name = newName();
    data.target(name, backfill, "pending_backfill", 4);
    data.sql(
        "update targets set first_failed_at = now() - interval '1 hour', last_error = 'boom',"
            + " next_attempt_at = now() + interval '5 minutes', last_attempt_at = now()"
            + " where name = ?",
        name);
    data.liveBatch(name, "queued", 120);
    data.liveBatch(name, "queued", 10);
    data.liveBatch(name, "applied", 600);

    Map<String, Object> target = api.get("/api/targets/" + name).object();

    assertThat(target)
        .containsEntry("failing", true)
        .containsEntry("consecutiveFailures", 4)
        .containsEntry("lastError", "boom")
        .containsEntry("blockedLiveBatches", 2);
    assertThat(((Number) target.get("oldestBlockedAgeSeconds")).longValue()).isBetween(120L, 180L);
    assertThat(target.get("firstFailedAt")).isNotNull();
    assertThat(target.get("nextAttemptAt")).isNotNull();
    assertThat(target.get("lastAttemptAt")).isNotNull();
  }

  @Test
  void aTargetNeedingAResyncIsFailingWhateverItsStreak() {
    String name = newName();
    data.target(name, backfill, "needs_resync", 0);

    assertThat(api.get("/api/targets/" + name).object()).containsEntry("failing", true);
  }

  @Test
  void aPrimedTargetIsNotFailingAndBlocksNothing() {
    String name = newName();
    data.target(name, backfill, "primed", 10);
    data.liveBatch(name, "queued", 60);

    Map<String, Object> target = api.get("/api/targets/" + name).object();

    assertThat(target)
        .containsEntry("failing", false)
        .containsEntry("consecutiveFailures", 10)
        .containsEntry("blockedLiveBatches", 0)
        .containsEntry("oldestBlockedAgeSeconds", null);
  }

  @Test
  void listsTargetsByNameWithFiltersAndPaging() {
    String group = "grp-" + backfill.substring(backfill.indexOf('.') + 1);
    String first = newName();
    String second = newName();
    String third = newName();
    data.target(first, backfill, "primed", 0);
    data.target(second, backfill, "pending_backfill", 3);
    data.target(third, backfill, "primed", 0);
    data.sql("update targets set group_name = ? where name in (?, ?)", group, first, second);
    data.liveBatch(second, "queued", 5);

    Api.Reply inGroup = api.get("/api/targets?group=" + group);
    Api.Reply primedInGroup = api.get("/api/targets?group=" + group + "&state=primed");
    Api.Reply paged = api.get("/api/targets?group=" + group + "&page=1&size=1");

    assertThat(inGroup.status()).isEqualTo(200);
    assertThat(inGroup.object()).containsEntry("total", 2).containsEntry("page", 0);
    assertThat(inGroup.items())
        .extracting(item -> item.get("name"))
        .containsExactly(
            first.compareTo(second) < 0 ? first : second,
            first.compareTo(second) < 0 ? second : first);
    assertThat(inGroup.items())
        .filteredOn(item -> item.get("name").equals(second))
        .singleElement()
        .satisfies(
            item ->
                assertThat(item)
                    .containsEntry("failing", true)
                    .containsEntry("blockedLiveBatches", 1));
    assertThat(primedInGroup.items()).extracting(item -> item.get("name")).containsExactly(first);
    assertThat(paged.object()).containsEntry("total", 2).containsEntry("size", 1);
    assertThat(paged.items()).hasSize(1);
  }

  @Test
  void queuingALiveBatchCountsThoseAheadEvenWhenTheWakeIsLost() {
    String name = newName();
    data.target(name, backfill, "backfilling", 0);
    data.liveBatch(name, "queued", 30);
    data.liveBatch(name, "applied", 60);

    Api.Reply reply =
        api.post(
            "/api/targets/" + name + "/live-batches",
            "{\"payload\":{\"rows\":[1,2],\"op\":\"x\"}}");

    assertThat(reply.status()).isEqualTo(202);
    long id = ((Number) reply.object().get("id")).longValue();
    assertThat(reply.object())
        .containsEntry("target", name)
        .containsEntry("status", "queued")
        .containsEntry("queuedAhead", 1);
    assertThat(data.text("select payload::text from live_batches where id = ?", id))
        .isEqualTo("{\"op\": \"x\", \"rows\": [1, 2]}");
    assertThat(data.text("select status from live_batches where id = ?", id)).isEqualTo("queued");
  }

  @Test
  void aDryRunReplanReportsAndChangesNothing() {
    String name = newName();
    data.target(name, backfill, "backfilling", 5);
    long run = data.run(backfill, "running", "{\"items\":5}");
    data.sql(
        "update targets set current_run_id = ?, first_failed_at = now(), last_error = 'boom',"
            + " next_attempt_at = now() + interval '1 minute' where name = ?",
        run,
        name);
    String before = row(name);

    Api.Reply reply = api.post("/api/targets/" + name + "/replan?dryRun=true", "");

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.object())
        .containsOnlyKeys(
            "name",
            "dryRun",
            "previousState",
            "previousConsecutiveFailures",
            "wouldCancelRunId",
            "resultingState")
        .containsEntry("name", name)
        .containsEntry("dryRun", true)
        .containsEntry("previousState", "backfilling")
        .containsEntry("previousConsecutiveFailures", 5)
        .containsEntry("wouldCancelRunId", (int) run)
        .containsEntry("resultingState", "pending_backfill");
    assertThat(row(name)).isEqualTo(before);
    assertThat(data.text("select status from runs where id = ?", run)).isEqualTo("running");
  }

  @Test
  void aReplanResetsTheStreakAndItsAnchors() {
    String name = newName();
    data.target(name, backfill, "needs_resync", 4);
    data.sql(
        "update targets set first_failed_at = now(), last_error = 'boom',"
            + " next_attempt_at = now() + interval '1 hour' where name = ?",
        name);

    Api.Reply reply = api.post("/api/targets/" + name + "/replan", "");

    assertThat(reply.status()).isEqualTo(202);
    assertThat(reply.object())
        .containsOnlyKeys(
            "name",
            "dryRun",
            "previousState",
            "previousConsecutiveFailures",
            "cancelledRunId",
            "state")
        .containsEntry("dryRun", false)
        .containsEntry("previousState", "needs_resync")
        .containsEntry("previousConsecutiveFailures", 4)
        .containsEntry("cancelledRunId", null)
        .containsEntry("state", "pending_backfill");
    assertThat(data.text("select state from targets where name = ?", name))
        .isEqualTo("pending_backfill");
    assertThat(data.count("select consecutive_failures from targets where name = ?", name))
        .isZero();
    assertThat(
            data.count(
                "select count(*) from targets where name = ? and first_failed_at is null"
                    + " and last_error is null and current_run_id is null"
                    + " and (next_attempt_at is null or next_attempt_at <= now())",
                name))
        .isEqualTo(1);
    assertThat(api.get("/api/targets/" + name).object()).containsEntry("failing", false);
  }

  @Test
  void aReplanThatCannotStopTheCancelledRunIs503ButStands() {
    String name = newName();
    data.target(name, backfill, "backfilling", 0);
    long run = data.run(backfill, "running", "{\"items\":5}");
    data.sql("update targets set current_run_id = ? where name = ?", run, name);

    Api.Reply reply = api.post("/api/targets/" + name + "/replan", "");

    assertThat(reply.status()).isEqualTo(503);
    assertThat((String) reply.object().get("detail"))
        .contains("is replanned")
        .contains("/api/runs/" + run + "/stop");
    assertThat(data.text("select state from targets where name = ?", name))
        .isEqualTo("pending_backfill");
  }

  @Test
  void deletingATargetRemovesItsLiveBatchesAndASecondDeleteIs404() {
    String name = newName();
    data.target(name, backfill, "primed", 0);
    data.liveBatch(name, "queued", 1);
    data.liveBatch(name, "applied", 2);

    Api.Reply first = api.delete("/api/targets/" + name);
    Api.Reply second = api.delete("/api/targets/" + name);

    assertThat(first.status()).isEqualTo(204);
    assertThat(second.status()).isEqualTo(404);
    assertThat(data.count("select count(*) from targets where name = ?", name)).isZero();
    assertThat(data.count("select count(*) from live_batches where target_name = ?", name))
        .isZero();
    assertThat(api.get("/api/targets/" + name).status()).isEqualTo(404);
  }

  /** The run's stop must reach its workflow first: without Temporal, nothing is deleted. */
  @Test
  void deletingATargetWithAnActiveRunWhenTemporalIsDownIs503AndDeletesNothing() {
    String name = newName();
    data.target(name, backfill, "backfilling", 0);
    long run = data.run(backfill, "running", "{\"items\":5}");
    data.sql("update targets set current_run_id = ? where name = ?", run, name);

    Api.Reply reply = api.delete("/api/targets/" + name);

    assertThat(reply.status()).isEqualTo(503);
    assertThat(data.count("select count(*) from targets where name = ?", name)).isEqualTo(1);
    assertThat(data.text("select status from runs where id = ?", run)).isEqualTo("running");
  }

  private String newName() {
    String name = TestData.uniqueTarget();
    targets.add(name);
    return name;
  }

  /** Every column a replan would touch, as one comparable string. */
  private String row(String name) {
    return data.text(
        "select concat_ws('|', state, consecutive_failures, first_failed_at, last_error,"
            + " next_attempt_at, current_run_id, last_attempt_at, updated_at)"
            + " from targets where name = ?",
        name);
  }
}
