package dev.dripline.app.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.client.WorkflowClient;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The audit trail (O4) of the API's actions, against the real PostgreSQL and a real Temporal server
 * with no worker: signals are taken by Temporal, Updates (retry, cap change) answer 503. Each
 * action records one entry with who, what and the outcome, and the viewer reads them back through
 * {@code GET /api/audit}.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.task-queue", value = "dripline-app-it-no-worker")
@Property(name = "dripline.api.dry-run-timeout", value = "2s")
class AuditTrailIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;
  @Inject WorkflowClient workflows;
  @Inject TemporalConfig temporal;
  @Inject AuditedForms forms;

  private Api operator;
  private Api viewer;
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final List<Long> runs = new ArrayList<>();
  private final List<String> targets = new ArrayList<>();
  private final List<String> pools = new ArrayList<>();

  @BeforeEach
  void setUp() {
    assumeTrue(
        TestData.reachable(temporal.address()), "no Temporal server at " + temporal.address());
    operator = new Api(client, json);
    viewer = new Api(client, json, Api.VIEWER_TOKEN);
    data = new TestData(database);
    data.definition(backfill, 10, 2);
  }

  @AfterEach
  void tearDown() {
    if (data == null) {
      return;
    }
    for (long id : runs) {
      terminate(RunWorkflowIds.forRun(id));
    }
    for (String name : targets) {
      terminate(TargetWorkflowIds.forTarget(name));
    }
    for (String pool : pools) {
      data.sql("delete from pools where name = ?", pool);
    }
    data.cleanUpTargets(targets.toArray(String[]::new));
    data.cleanUp(backfill);
    data.sql("delete from throttle_brake");
  }

  @Test
  void eachRunActionRecordsOneEntryWithItsCallerAndOutcome() {
    Api.Reply preview = operator.post("/api/runs?dryRun=true", runBody());
    long mark = lastId();
    long id = create();

    assertThat(operator.post("/api/runs/" + id + "/pause", "").status()).isEqualTo(202);
    assertThat(operator.post("/api/runs/" + id + "/resume", "").status()).isEqualTo(409);
    assertThat(operator.post("/api/runs/" + id + "/retry", "").status()).isEqualTo(409);
    Api.Reply cap = operator.patch("/api/runs/" + id, "{\"maxParallelBatches\":1}");
    assertThat(operator.post("/api/runs/" + id + "/stop", "").status()).isEqualTo(202);
    assertThat(operator.delete("/api/runs/" + id).status()).isEqualTo(204);

    List<Map<String, Object>> entries = viewer.get("/api/audit?run=" + id).items();
    assertThat(entries)
        .extracting(e -> e.get("action"))
        .containsExactly(
            "run.delete",
            "run.stop",
            "run.cap",
            "run.retry",
            "run.resume",
            "run.pause",
            "run.create");
    assertThat(entries).allSatisfy(e -> assertThat(e).containsEntry("actor", "operator"));
    Map<String, Map<String, Object>> byAction = byAction(entries);
    assertThat(byAction.get("run.create"))
        .containsEntry("runId", (int) id)
        .containsEntry("outcome", "accepted")
        .containsEntry("status", 201)
        .containsEntry("problem", null)
        .containsEntry("detail", runBody());
    assertThat(byAction.get("run.pause"))
        .containsEntry("outcome", "accepted")
        .containsEntry("status", 202);
    assertThat(byAction.get("run.resume"))
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 409)
        .containsEntry("problem", "run " + id + " is pending; only a paused run can be resumed");
    assertThat(byAction.get("run.retry"))
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 409);
    assertThat(byAction.get("run.cap"))
        .containsEntry("outcome", "rejected")
        .containsEntry("status", cap.status())
        .containsEntry("problem", cap.object().get("detail"))
        .containsEntry("detail", "{\"maxParallelBatches\":1}");
    assertThat(byAction.get("run.stop")).containsEntry("outcome", "accepted");
    assertThat(byAction.get("run.delete"))
        .containsEntry("outcome", "accepted")
        .containsEntry("status", 204);
    assertThat(entries.get(0).get("at")).isInstanceOf(String.class);
    // The dry run (unanswered: no worker) changes nothing and is no action: it is not recorded.
    assertThat(preview.status()).isEqualTo(503);
    assertThat(data.count("select count(*) from audit_events where id > ?", mark))
        .isEqualTo(entries.size());
  }

  @Test
  void aRejectionNamesWhatItWasAskedAbout() {
    long mark = lastId();

    assertThat(operator.post("/api/runs/not-a-run/stop", "").status()).isEqualTo(404);
    assertThat(operator.post("/api/runs", "{\"backfill\":1}").status()).isEqualTo(400);

    List<Map<String, Object>> entries = since(mark);
    assertThat(entries).hasSize(2);
    assertThat(entries.get(1))
        .containsEntry("action", "run.stop")
        .containsEntry("run_id", null)
        .containsEntry("subject", "not-a-run")
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 404);
    assertThat(entries.get(0))
        .containsEntry("action", "run.create")
        .containsEntry("run_id", null)
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 400)
        .containsEntry("detail", "{\"backfill\":1}");
    assertThat(entries.get(0)).containsEntry("problem", "backfill: must be a string");
  }

  @Test
  void hostileInputIsRecordedAsPostgresCanStoreIt() {
    long mark = lastId();
    String body = "{\"backfill\":\"a\u0000b\"}";

    assertThat(operator.post("/api/runs", body).status()).isEqualTo(400);

    List<Map<String, Object>> entries = since(mark);
    assertThat(entries).hasSize(1);
    assertThat(entries.get(0))
        .containsEntry("action", "run.create")
        .containsEntry("outcome", "rejected")
        .containsEntry("detail", "{\"backfill\":\"a\uFFFDb\"}");
  }

  @Test
  void targetActionsAreRecordedAndFilteredByTarget() {
    String name = TestData.uniqueTarget();
    targets.add(name);

    assertThat(operator.post("/api/targets", TestData.targetBody(name, backfill, 5)).status())
        .isEqualTo(201);
    assertThat(operator.post("/api/targets/" + name + "/replan?dryRun=true", "").status())
        .isEqualTo(200);
    Api.Reply replan = operator.post("/api/targets/" + name + "/replan", "");
    assertThat(operator.post("/api/targets/" + name + "/live-batches", "{\"payload\":{}}").status())
        .isEqualTo(202);
    assertThat(operator.delete("/api/targets/" + name).status()).isEqualTo(204);
    assertThat(operator.delete("/api/targets/" + name).status()).isEqualTo(404);

    List<Map<String, Object>> entries = viewer.get("/api/audit?target=" + name).items();
    assertThat(entries)
        .extracting(e -> e.get("action"))
        .containsExactly("target.delete", "target.delete", "target.replan", "target.create");
    assertThat(entries)
        .extracting(e -> e.get("status"))
        .containsExactly(404, 204, replan.status(), 201);
    assertThat(entries.get(3))
        .containsEntry("actor", "operator")
        .containsEntry("outcome", "accepted")
        .containsEntry("detail", TestData.targetBody(name, backfill, 5));
    assertThat(entries.get(0)).containsEntry("outcome", "rejected");
  }

  @Test
  void poolAndThrottleActionsAreRecordedWithWhatTheyNamed() {
    String pool = "audit-" + TestData.uniqueName();
    pools.add(pool);
    long mark = lastId();

    assertThat(operator.put("/api/pools/" + pool, "{\"size\":3}").status()).isEqualTo(200);
    assertThat(operator.put("/api/pools/" + pool, "{\"size\":0}").status()).isEqualTo(400);
    assertThat(operator.post("/api/throttle/hold", "{\"reason\":\"drill\"}").status())
        .isEqualTo(200);
    assertThat(operator.post("/api/throttle/release", "").status()).isEqualTo(200);
    Api.Reply check = operator.patch("/api/throttle/checks/no-such-check", "{\"threshold\":1}");

    List<Map<String, Object>> entries = since(mark);
    assertThat(entries)
        .extracting(e -> e.get("action"))
        .containsExactly(
            "throttle.check", "throttle.release", "throttle.hold", "pool.put", "pool.put");
    assertThat(entries.get(0))
        .containsEntry("subject", "no-such-check")
        .containsEntry("outcome", "rejected")
        .containsEntry("status", check.status())
        .containsEntry("problem", check.object().get("detail"));
    assertThat(entries.get(1)).containsEntry("outcome", "accepted").containsEntry("status", 200);
    assertThat(entries.get(2)).containsEntry("detail", "{\"reason\":\"drill\"}");
    assertThat(entries.get(3))
        .containsEntry("subject", pool)
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 400);
    assertThat(entries.get(4))
        .containsEntry("subject", pool)
        .containsEntry("outcome", "accepted")
        .containsEntry("detail", "{\"size\":3}");
    assertThat(entries).allSatisfy(e -> assertThat(e).containsEntry("actor", "operator"));
  }

  @Test
  void aFailedAuditWriteLeavesTheActionDoneAndAnswered() {
    String pool = "audit-" + TestData.uniqueName();
    pools.add(pool);
    long mark = lastId();
    data.sql(
        "create function audit_it_refuse() returns trigger language plpgsql as"
            + " $$ begin raise exception 'audit write refused by AuditTrailIT'; end $$");
    Api.Reply reply;
    try {
      data.sql(
          "create trigger audit_it_refuse before insert on audit_events"
              + " for each row execute function audit_it_refuse()");
      reply = operator.put("/api/pools/" + pool, "{\"size\":2}");
    } finally {
      data.sql("drop trigger if exists audit_it_refuse on audit_events");
      data.sql("drop function if exists audit_it_refuse()");
    }

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.object()).containsEntry("name", pool).containsEntry("size", 2);
    assertThat(data.count("select size from pools where name = ?", pool)).isEqualTo(2);
    assertThat(lastId()).isEqualTo(mark);
  }

  @Test
  void anyBeanMethodIsAuditedAndARefusalItAnswersItselfIsRecordedAsOne() {
    long mark = lastId();

    forms.refuse(987_654_321L, "{\"maxParallelBatches\":3}");
    assertThat(forms.done("form-" + backfill)).isEqualTo("done form-" + backfill);

    List<Map<String, Object>> entries = since(mark);
    assertThat(entries).hasSize(2);
    // Outside a request there is no caller.
    assertThat(entries.get(1))
        .containsEntry("action", "test.form-refused")
        .containsEntry("actor", "anonymous")
        .containsEntry("run_id", 987_654_321L)
        .containsEntry("detail", "{\"maxParallelBatches\":3}")
        .containsEntry("outcome", "rejected")
        .containsEntry("status", 409)
        .containsEntry("problem", "run 987654321 is completed; its cap can no longer change");
    assertThat(entries.get(0))
        .containsEntry("action", "test.form-done")
        .containsEntry("subject", "form-" + backfill)
        .containsEntry("outcome", "accepted")
        .containsEntry("status", 200)
        .containsEntry("problem", null);
  }

  @Test
  void aViewerReadsTheTrailInPagesButItsRefusedActionsAreNoneOfIt() {
    long id = create();
    for (int i = 0; i < 3; i++) {
      operator.post("/api/runs/" + id + "/pause", "");
    }
    long mark = lastId();

    assertThat(viewer.post("/api/runs/" + id + "/stop", "").status()).isEqualTo(403);
    Api.Reply first = viewer.get("/api/audit?run=" + id + "&size=2");
    Api.Reply second = viewer.get("/api/audit?run=" + id + "&size=2&page=1");

    assertThat(lastId()).isEqualTo(mark);
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.object())
        .containsEntry("page", 0)
        .containsEntry("size", 2)
        .containsEntry("total", 4);
    assertThat(first.items())
        .extracting(e -> e.get("action"))
        .containsExactly("run.pause", "run.pause");
    assertThat(second.items())
        .extracting(e -> e.get("action"))
        .containsExactly("run.pause", "run.create");
    assertThat((Integer) first.items().get(0).get("id"))
        .isGreaterThan((Integer) first.items().get(1).get("id"));
  }

  @Test
  void webhookActionsAreRecordedWithTheWebhooksIdAndNeverItsSecret() {
    String secret =
        "whsec_"
            + Base64.getEncoder()
                .encodeToString(
                    "audit-trail-it-secret-0123456789".getBytes(StandardCharsets.UTF_8));
    long mark = lastId();

    Api.Reply created =
        operator.post(
            "/api/webhooks",
            "{\"url\":\"http://127.0.0.1:18171/audit-it\",\"events\":[\"run.failed\"],"
                + "\"secret\":\""
                + secret
                + "\"}");
    assertThat(created.status()).isEqualTo(201);
    String id = String.valueOf(created.object().get("id"));
    assertThat(operator.delete("/api/webhooks/" + id).status()).isEqualTo(204);
    assertThat(operator.delete("/api/webhooks/" + id).status()).isEqualTo(404);

    List<Map<String, Object>> entries = since(mark);
    assertThat(entries)
        .extracting(e -> e.get("action"))
        .containsExactly("webhook.delete", "webhook.delete", "webhook.create");
    assertThat(entries).allSatisfy(e -> assertThat(e).containsEntry("subject", id));
    assertThat(entries.get(2))
        .containsEntry("actor", "operator")
        .containsEntry("outcome", "accepted")
        .containsEntry("status", 201)
        .containsEntry("detail", null);
    assertThat(entries.get(1)).containsEntry("outcome", "accepted").containsEntry("status", 204);
    assertThat(entries.get(0)).containsEntry("outcome", "rejected").containsEntry("status", 404);
    Api.Reply trail = viewer.get("/api/audit?size=200");
    assertThat(trail.status()).isEqualTo(200);
    assertThat(String.valueOf(trail.body())).contains("webhook.create").doesNotContain(secret);
    assertThat(String.valueOf(trail.body())).doesNotContain(secret.substring(6, 30));
    assertThat(
            data.count(
                "select count(*) from audit_events where id > ? and (coalesce(detail, '')"
                    + " || coalesce(subject, '') || coalesce(problem, '')) like ?",
                mark,
                "%" + secret.substring(6, 30) + "%"))
        .isZero();
  }

  @Test
  void badParametersAre400WithEveryBadOneNamed() {
    Api.Reply reply = viewer.get("/api/audit?run=x&size=0&page=-1&limit=3");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactlyInAnyOrder("run", "size", "page", "limit");
    assertThat(viewer.get("/api/audit?run=0").errorFields()).containsExactly("run");
    assertThat(new Api(client, json, null).get("/api/audit").status()).isEqualTo(401);
  }

  private long create() {
    Api.Reply reply = operator.post("/api/runs", runBody());
    assertThat(reply.status()).isEqualTo(201);
    long id = ((Number) reply.object().get("id")).longValue();
    runs.add(id);
    return id;
  }

  private String runBody() {
    return "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":5}}";
  }

  private long lastId() {
    return data.count("select coalesce(max(id), 0) from audit_events");
  }

  /** The entries recorded after {@code mark}, newest first, as the table holds them. */
  private List<Map<String, Object>> since(long mark) {
    return database.withConnection(
        connection -> {
          List<Map<String, Object>> entries = new ArrayList<>();
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select action, actor, run_id, subject, detail, outcome, status, problem"
                      + " from audit_events where id > ? order by id desc")) {
            select.setLong(1, mark);
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                Map<String, Object> entry = new HashMap<>();
                for (String column :
                    List.of("action", "actor", "subject", "detail", "outcome", "problem")) {
                  entry.put(column, rs.getString(column));
                }
                entry.put("run_id", rs.getObject("run_id"));
                entry.put("status", rs.getObject("status"));
                entries.add(entry);
              }
            }
          }
          return entries;
        });
  }

  private static Map<String, Map<String, Object>> byAction(List<Map<String, Object>> entries) {
    Map<String, Map<String, Object>> found = new HashMap<>();
    for (Map<String, Object> entry : entries) {
      found.putIfAbsent((String) entry.get("action"), entry);
    }
    return found;
  }

  private void terminate(String workflowId) {
    try {
      workflows.newUntypedWorkflowStub(workflowId).terminate("test over");
    } catch (RuntimeException e) {
      // never started, or already closed
    }
  }
}
