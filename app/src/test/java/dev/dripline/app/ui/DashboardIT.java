package dev.dripline.app.ui;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's sign-in, sessions, form tokens and pages, over HTTP as a browser sends it, with
 * Temporal unreachable: who may see and send what, and that a control the API refuses is refused on
 * the page with the API's detail and status, nothing done. The dashboard in a real browser against
 * running workflows is {@code DashboardBrowserIT} (standalone).
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class DashboardIT {
  @Inject EmbeddedServer server;

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private TestData data;
  private UiClient browser;
  private final String backfill = TestData.uniqueName();
  private final String failingTarget = TestData.uniqueTarget();
  private final String healthyTarget = "aaa-" + TestData.uniqueTarget();

  @BeforeEach
  void setUp() {
    data = new TestData(database);
    data.definition(backfill, 10, null);
    browser = new UiClient(server.getURI());
  }

  @AfterEach
  void tearDown() {
    data.cleanUpTargets(failingTarget, healthyTarget);
    data.cleanUp(backfill);
  }

  @Test
  void aPageWithoutASessionLeadsToTheSignInPage() {
    UiClient.Page page = browser.get("/ui/runs?status=running");

    assertThat(page.status()).isEqualTo(303);
    assertThat(page.location()).startsWith("/ui/login?next=");
  }

  @Test
  void signingInSetsAnHttpOnlySameSiteSessionCookieForTheDashboardOnly() {
    UiClient.Page answer = browser.signIn(Api.OPERATOR_TOKEN);

    assertThat(answer.status()).isEqualTo(303);
    assertThat(answer.location()).isEqualTo("/ui/runs");
    String cookie =
        answer.setCookies().stream()
            .filter(c -> c.startsWith(UiSessions.COOKIE + "="))
            .findFirst()
            .orElseThrow();
    assertThat(cookie).containsIgnoringCase("HttpOnly").containsIgnoringCase("SameSite=Lax");
    assertThat(cookie).containsIgnoringCase("Path=/ui");
    // Not the production profile: the local stack is plain HTTP.
    assertThat(cookie).doesNotContainIgnoringCase("Secure");
    assertThat(browser.get("/ui/runs").status()).isEqualTo(200);
  }

  @Test
  void aWrongTokenIsRefusedAndNoSessionIsSet() {
    UiClient.Page answer = browser.signIn("not-a-token");

    assertThat(answer.status()).isEqualTo(401);
    assertThat(answer.body()).contains("neither the operator");
    assertThat(browser.cookie(UiSessions.COOKIE)).isNull();
  }

  @Test
  void theSignInFormNeedsItsFormToken() {
    browser.get("/ui/login");

    UiClient.Page without =
        browser.post("/ui/login", Map.of("token", Api.OPERATOR_TOKEN, "next", "/ui/runs"));
    UiClient.Page wrong =
        browser.post(
            "/ui/login", Map.of("_csrf", "forged", "token", Api.OPERATOR_TOKEN, "next", "/ui"));

    assertThat(without.status()).isEqualTo(403);
    assertThat(wrong.status()).isEqualTo(403);
    assertThat(browser.cookie(UiSessions.COOKIE)).isNull();
  }

  @Test
  void aSignInNeverLeadsToAnotherSite() {
    UiClient.Page login = browser.get("/ui/login");

    UiClient.Page answer =
        browser.post(
            "/ui/login",
            Map.of("_csrf", login.csrf(), "token", Api.VIEWER_TOKEN, "next", "//evil.example/ui"));

    assertThat(answer.status()).isEqualTo(303);
    assertThat(answer.location()).isEqualTo("/ui/runs");
  }

  @Test
  void aTamperedSessionIsNoSession() {
    browser.signIn(Api.VIEWER_TOKEN);
    String session = browser.cookie(UiSessions.COOKIE);
    browser.setCookie(UiSessions.COOKIE, session.replace(".viewer.", ".operator."));

    assertThat(browser.get("/ui/runs").status()).isEqualTo(303);
  }

  @Test
  void theSessionCookieDoesNotOpenTheApi() {
    browser.signIn(Api.OPERATOR_TOKEN);

    UiClient.Page api = browser.get("/api/runs");

    assertThat(api.status()).isEqualTo(401);
  }

  @Test
  void theRunsPageListsRunsWithTheirProgressAndFilters() {
    long running = data.run(backfill, "running", "{\"items\":20}");
    data.sql("update runs set total_keys = 20 where id = ?", running);
    data.batches(running, "completed", "failed");
    data.sql(
        "update run_key_counts set processed_keys = case shard when 15 then 10 else 0 end"
            + " where run_id = ?",
        running);
    long done = data.run(backfill, "completed", "{\"items\":9}");
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page all = browser.get("/ui/runs?backfill=" + backfill);
    UiClient.Page onlyRunning = browser.get("/ui/runs?backfill=" + backfill + "&status=running");
    UiClient.Page badFilter = browser.get("/ui/runs?status=sleeping");

    assertThat(all.status()).isEqualTo(200);
    assertThat(all.body()).contains("data-run=\"" + running + "\"", "data-run=\"" + done + "\"");
    assertThat(all.body()).contains("50% · 10 / 20");
    assertThat(onlyRunning.body())
        .contains("data-run=\"" + running + "\"")
        .doesNotContain("data-run=\"" + done + "\"");
    assertThat(badFilter.status()).isEqualTo(400);
    assertThat(badFilter.body()).contains("status: must be one of");
  }

  @Test
  void aViewerSeesNoControlsAndItsPostIsRefused() {
    long id = data.run(backfill, "running", "{\"items\":5}");
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page page = browser.get("/ui/runs/" + id);
    UiClient.Page post = browser.post("/ui/runs/" + id + "/stop", Map.of("_csrf", page.csrf()));

    assertThat(page.status()).isEqualTo(200);
    assertThat(page.body()).doesNotContain("/ui/runs/" + id + "/stop", "New run");
    assertThat(post.status()).isEqualTo(403);
    assertThat(post.body()).contains("The viewer may only read");
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo("running");
  }

  @Test
  void anOperatorSeesTheControlsAndTheTemporalLink() {
    long id = data.run(backfill, "running", "{\"items\":5}");
    browser.signIn(Api.OPERATOR_TOKEN);

    UiClient.Page page = browser.get("/ui/runs/" + id);

    assertThat(page.body())
        .contains(
            "/ui/runs/" + id + "/stop",
            "/ui/runs/" + id + "/pause",
            "/ui/runs/" + id + "/cap",
            "http://localhost:8233/namespaces/default/workflows/dripline-run-" + id)
        .doesNotContain("/ui/runs/" + id + "/resume");
  }

  @Test
  void aControlPostWithoutOrWithAWrongFormTokenIsRefused() {
    long id = data.run(backfill, "completed", "{\"items\":5}");
    browser.signIn(Api.OPERATOR_TOKEN);

    UiClient.Page without = browser.post("/ui/runs/" + id + "/delete", Map.of());
    UiClient.Page wrong = browser.post("/ui/runs/" + id + "/delete", Map.of("_csrf", "forged"));

    assertThat(without.status()).isEqualTo(403);
    assertThat(wrong.status()).isEqualTo(403);
    assertThat(wrong.body()).contains("security token");
    assertThat(data.count("select count(*) from runs where id = ?", id)).isEqualTo(1);
  }

  @Test
  void anotherSessionsFormTokenIsWrong() {
    long id = data.run(backfill, "completed", "{\"items\":5}");
    UiClient other = new UiClient(server.getURI());
    other.signIn(Api.OPERATOR_TOKEN);
    String othersToken = other.get("/ui/runs").csrf();
    browser.signIn(Api.OPERATOR_TOKEN);

    UiClient.Page answer = browser.post("/ui/runs/" + id + "/delete", Map.of("_csrf", othersToken));

    assertThat(answer.status()).isEqualTo(403);
    assertThat(data.count("select count(*) from runs where id = ?", id)).isEqualTo(1);
  }

  @Test
  void aControlTheApiRefusesIsRefusedWithTheApisStatusAndDetail() {
    long id = data.run(backfill, "completed", "{\"items\":5}");
    Api.Reply fromApi = new Api(client, json).post("/api/runs/" + id + "/pause", "");
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/" + id).csrf();

    UiClient.Page answer = browser.post("/ui/runs/" + id + "/pause", Map.of("_csrf", token));

    assertThat(fromApi.status()).isEqualTo(409);
    assertThat(answer.status()).isEqualTo(409);
    assertThat(answer.body()).contains(escaped((String) fromApi.object().get("detail")));
    assertThat(data.text("select status from runs where id = ?", id)).isEqualTo("completed");
  }

  @Test
  void aRefusedControlIsAuditedAsRejectedWithTheApisDetailAndShownOnTheRunsPage() {
    long id = data.run(backfill, "completed", "{\"items\":5}");
    Api.Reply fromApi = new Api(client, json).post("/api/runs/" + id + "/pause", "");
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/" + id).csrf();
    long mark = lastAuditId();

    UiClient.Page answer = browser.post("/ui/runs/" + id + "/pause", Map.of("_csrf", token));

    assertThat(answer.status()).isEqualTo(409);
    assertThat(
            data.text(
                "select actor || ' ' || action || ' ' || outcome || ' ' || status || ' ' || problem"
                    + " from audit_events where id > ? and run_id = ?",
                mark,
                id))
        .isEqualTo("operator run.pause rejected 409 " + fromApi.object().get("detail"));
    assertThat(browser.get("/ui/runs/" + id).body())
        .contains(
            "data-action=\"run.pause\" data-outcome=\"rejected\"",
            escaped((String) fromApi.object().get("detail")));
  }

  @Test
  void aPostRefusedForItsCallerIsRecordedNowhere() {
    long id = data.run(backfill, "running", "{\"items\":5}");
    UiClient viewer = new UiClient(server.getURI());
    viewer.signIn(Api.VIEWER_TOKEN);
    String viewersToken = viewer.get("/ui/runs/" + id).csrf();
    browser.signIn(Api.OPERATOR_TOKEN);
    long mark = lastAuditId();

    UiClient.Page noToken = browser.post("/ui/runs/" + id + "/stop", Map.of());
    UiClient.Page forged = browser.post("/ui/runs/" + id + "/pause", Map.of("_csrf", "forged"));
    UiClient.Page byViewer = viewer.post("/ui/runs/" + id + "/stop", Map.of("_csrf", viewersToken));
    UiClient.Page noSession =
        new UiClient(server.getURI()).post("/ui/runs/" + id + "/stop", Map.of());

    assertThat(noToken.status()).isEqualTo(403);
    assertThat(forged.status()).isEqualTo(403);
    assertThat(byViewer.status()).isEqualTo(403);
    assertThat(noSession.status()).isEqualTo(401);
    assertThat(data.count("select count(*) from audit_events where id > ?", mark)).isZero();
  }

  @Test
  void aRunsPageShowsItsLastTwentyAuditEntriesNewestFirst() {
    long id = data.run(backfill, "running", "{\"items\":5}");
    for (int i = 1; i <= 25; i++) {
      data.sql(
          "insert into audit_events (actor, action, run_id, outcome, status)"
              + " values ('operator', ?, ?, 'accepted', 202)",
          "run.test-" + i,
          id);
    }
    browser.signIn(Api.VIEWER_TOKEN);

    String page = browser.get("/ui/runs/" + id).body();

    String audit = page.substring(page.indexOf("<section id=\"audit\""));
    java.util.regex.Matcher rows =
        java.util.regex.Pattern.compile("data-action=\"(run\\.test-\\d+)\"").matcher(audit);
    java.util.List<String> actions = new java.util.ArrayList<>();
    while (rows.find()) {
      actions.add(rows.group(1));
    }
    assertThat(actions).hasSize(20).startsWith("run.test-25", "run.test-24").endsWith("run.test-6");
    assertThat(audit).contains("<td>operator</td>", "accepted (202)");
  }

  @Test
  void anOperatorDeletesAnEndedRun() {
    long id = data.run(backfill, "stopped", "{\"items\":5}");
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/" + id).csrf();

    UiClient.Page answer = browser.post("/ui/runs/" + id + "/delete", Map.of("_csrf", token));

    assertThat(answer.status()).isEqualTo(303);
    assertThat(answer.location()).isEqualTo("/ui/runs?notice=deleted");
    assertThat(data.count("select count(*) from runs where id = ?", id)).isZero();
  }

  @Test
  void aRunPageShowsItsFailedBatchesPagedAndItsThroughput() {
    long id = data.run(backfill, "failed", "{\"items\":200}");
    String[] statuses = new String[15];
    for (int i = 0; i < statuses.length; i++) {
      statuses[i] = i < 3 ? "completed" : "failed";
    }
    data.batches(id, statuses);
    data.sql(
        "update batches set finished_at = now() - make_interval(secs => number),"
            + " error = 'boom in batch ' || number where run_id = ?",
        id);
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page first = browser.get("/ui/runs/" + id);
    UiClient.Page second = browser.get("/ui/runs/" + id + "?failedPage=2");

    assertThat(first.body()).contains("Failed batches (12)", "boom in batch 4", "<svg");
    assertThat(first.body()).doesNotContain("boom in batch 14");
    assertThat(second.body()).contains("boom in batch 14");
  }

  @Test
  void theNewRunFormIsBuiltFromTheOptionSchema() {
    browser.signIn(Api.OPERATOR_TOKEN);

    UiClient.Page form = browser.get("/ui/runs/new?backfill=" + backfill);

    assertThat(form.body())
        .contains("<select id=\"options.mode\" name=\"options.mode\">")
        .contains("<option value=\"fast\" selected=\"selected\">fast</option>")
        .contains("type=\"date\"")
        .containsPattern(
            "id=\"options.sleepMs\" name=\"options.sleepMs\"\\s+type=\"text\" value=\"0\"");
  }

  @Test
  void aRefusedFormShowsEachFieldsErrorAndCreatesNothing() {
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/new?backfill=" + backfill).csrf();

    UiClient.Page answer =
        browser.post(
            "/ui/runs/new",
            Map.of(
                "_csrf", token,
                "backfill", backfill,
                "intent", "start",
                "options.items", "-3",
                "options.from", "2026-02-01",
                "options.to", "2026-01-01",
                "batchSize", "many"));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(answer.body())
        .contains("data-field=\"options.items\"")
        .contains("data-field=\"options.to\"")
        .contains("data-field=\"batchSize\"");
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isZero();
  }

  @Test
  void theNewRunFormOffersTheRunSettingsWithWhatAnEmptyOneMeans() {
    String pool = "ui-" + backfill.substring(backfill.indexOf('.') + 1);
    data.sql("insert into pools (name, size) values (?, 3)", pool);
    data.sql(
        "update backfill_definitions set target_batch_millis = 2000, min_batch_size = 5,"
            + " nice_ratio = 0.5 where name = ?",
        backfill);
    try {
      browser.signIn(Api.OPERATOR_TOKEN);

      String form = browser.get("/ui/runs/new?backfill=" + backfill).body();

      assertThat(form)
          .contains("id=\"startAt\" name=\"startAt\"", "type=\"datetime-local\"")
          .contains("<select id=\"pool\" name=\"pool\">")
          .contains("<option value=\"\" selected=\"selected\">(none)</option>")
          .contains("<option value=\"" + pool + "\">" + pool + "</option>")
          .containsPattern("name=\"targetBatchDuration\"[^>]*placeholder=\"PT2S\"")
          .containsPattern("name=\"minBatchSize\"[^>]*placeholder=\"5\"")
          .containsPattern("name=\"maxFailedBatchesPercent\"[^>]*placeholder=\"none\"")
          .containsPattern("name=\"failureBudgetMinBatches\"[^>]*placeholder=\"20\"")
          .containsPattern("name=\"niceRatio\"[^>]*placeholder=\"0.5\"");
    } finally {
      data.sql("delete from pools where name = ?", pool);
    }
  }

  @Test
  void aRefusedRunSettingShowsTheApisMessageBesideItAndCreatesNothing() {
    Api.Reply fromApi =
        new Api(client, json)
            .post(
                "/api/runs",
                "{\"backfill\":\""
                    + backfill
                    + "\",\"options\":{\"items\":5},\"startAt\":\"tomorrow\","
                    + "\"pool\":\"no-such-pool\",\"targetBatchDuration\":\"soon\","
                    + "\"maxFailedBatchesPercent\":101,\"failureBudgetMinBatches\":0,"
                    + "\"niceRatio\":-1}");
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/new?backfill=" + backfill).csrf();
    Map<String, String> form = new java.util.HashMap<>();
    form.put("_csrf", token);
    form.put("backfill", backfill);
    form.put("intent", "preview");
    form.put("options.items", "5");
    form.put("startAt", "tomorrow");
    form.put("pool", "no-such-pool");
    form.put("targetBatchDuration", "soon");
    form.put("maxFailedBatchesPercent", "101");
    form.put("failureBudgetMinBatches", "0");
    form.put("niceRatio", "-1");

    UiClient.Page answer = browser.post("/ui/runs/new", form);

    assertThat(fromApi.status()).isEqualTo(400);
    @SuppressWarnings("unchecked")
    java.util.List<Map<String, Object>> errors =
        (java.util.List<Map<String, Object>>) fromApi.object().get("errors");
    assertThat(errors)
        .extracting(e -> e.get("field"))
        .containsExactlyInAnyOrder(
            "startAt",
            "pool",
            "targetBatchDuration",
            "maxFailedBatchesPercent",
            "failureBudgetMinBatches",
            "niceRatio");
    assertThat(answer.status()).isEqualTo(400);
    for (Map<String, Object> error : errors) {
      assertThat(answer.body())
          .contains(
              "class=\"field-error\" data-field=\""
                  + error.get("field")
                  + "\">"
                  + escaped((String) error.get("message"))
                  + "</span>");
    }
    // The values typed are shown again, to be corrected.
    assertThat(answer.body()).contains("value=\"tomorrow\"", "value=\"soon\"");
    assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isZero();
  }

  @Test
  void aStartedFormSendsTheRunSettingsAsTheApisBody() {
    String pool = "ui-" + backfill.substring(backfill.indexOf('.') + 1);
    data.sql("insert into pools (name, size) values (?, 3)", pool);
    try {
      browser.signIn(Api.OPERATOR_TOKEN);
      String token = browser.get("/ui/runs/new?backfill=" + backfill).csrf();
      long mark = lastAuditId();
      Map<String, String> form = new java.util.HashMap<>();
      form.put("_csrf", token);
      form.put("backfill", backfill);
      form.put("intent", "start");
      form.put("options.items", "5");
      form.put("startAt", "2030-01-02T03:04");
      form.put("pool", pool);
      form.put("batchSize", "7");
      form.put("targetBatchDuration", "PT3S");
      form.put("maxFailedBatchesPercent", "12.5");
      form.put("niceRatio", "");

      // Temporal is unreachable here: the API's 503, nothing created; the body it was sent is in
      // the audit trail.
      UiClient.Page answer = browser.post("/ui/runs/new", form);

      assertThat(answer.status()).isEqualTo(503);
      assertThat(data.count("select count(*) from runs where backfill = ?", backfill)).isZero();
      assertThat(
              data.text(
                  "select detail from audit_events where id > ? and action = 'run.create'", mark))
          .contains(
              "\"startAt\":\"2030-01-02T03:04:00Z\"",
              "\"pool\":\"" + pool + "\"",
              "\"batchSize\":7",
              "\"targetBatchDuration\":\"PT3S\"",
              "\"maxFailedBatchesPercent\":12.5")
          .doesNotContain("niceRatio");
    } finally {
      data.sql("delete from pools where name = ?", pool);
    }
  }

  @Test
  void targetsListFailingOnesFirst() {
    data.target(healthyTarget, backfill, "primed", 0);
    data.target(failingTarget, backfill, "pending_backfill", 5);
    browser.signIn(Api.VIEWER_TOKEN);

    String body = browser.get("/ui/targets").body();

    assertThat(body).contains("data-target=\"" + failingTarget + "\" data-failing=\"true\"");
    assertThat(body.indexOf(failingTarget)).isLessThan(body.indexOf(healthyTarget));
  }

  @Test
  void aViewerSeesNoTargetActionsAndItsPostIsRefused() {
    data.target(failingTarget, backfill, "pending_backfill", 5);
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page page = browser.get("/ui/targets");
    UiClient.Page replan =
        browser.post(
            "/ui/targets/" + failingTarget + "/replan",
            Map.of("_csrf", page.csrf(), "intent", "replan"));
    UiClient.Page delete =
        browser.post("/ui/targets/" + failingTarget + "/delete", Map.of("_csrf", page.csrf()));

    assertThat(page.body())
        .doesNotContain("/ui/targets/" + failingTarget + "/replan", "/delete", "Actions");
    assertThat(replan.status()).isEqualTo(403);
    assertThat(delete.status()).isEqualTo(403);
    assertThat(
            data.text(
                "select state || ' ' || consecutive_failures from targets where name = ?",
                failingTarget))
        .isEqualTo("pending_backfill 5");
  }

  @Test
  void aTargetActionWithoutTheFormTokenIsRefusedAndRecordedNowhere() {
    data.target(failingTarget, backfill, "pending_backfill", 5);
    browser.signIn(Api.OPERATOR_TOKEN);
    long mark = lastAuditId();

    UiClient.Page replan =
        browser.post("/ui/targets/" + failingTarget + "/replan", Map.of("intent", "replan"));
    UiClient.Page delete =
        browser.post("/ui/targets/" + failingTarget + "/delete", Map.of("_csrf", "forged"));

    assertThat(replan.status()).isEqualTo(403);
    assertThat(delete.status()).isEqualTo(403);
    assertThat(data.count("select count(*) from targets where name = ?", failingTarget))
        .isEqualTo(1);
    assertThat(data.count("select count(*) from audit_events where id > ?", mark)).isZero();
  }

  @Test
  void anOperatorPreviewsThenReplansAFailingTargetAndItIsAudited() {
    data.target(failingTarget, backfill, "primed", 5);
    browser.signIn(Api.OPERATOR_TOKEN);
    UiClient.Page page = browser.get("/ui/targets");
    long mark = lastAuditId();

    UiClient.Page preview =
        browser.post(
            "/ui/targets/" + failingTarget + "/replan",
            Map.of("_csrf", page.csrf(), "intent", "preview"));
    String afterPreview =
        data.text(
            "select state || ' ' || consecutive_failures from targets where name = ?",
            failingTarget);
    long auditedByPreview = data.count("select count(*) from audit_events where id > ?", mark);
    UiClient.Page replan =
        browser.post(
            "/ui/targets/" + failingTarget + "/replan",
            Map.of("_csrf", page.csrf(), "intent", "replan"));

    assertThat(page.body())
        .contains(
            "/ui/targets/" + failingTarget + "/replan", "/ui/targets/" + failingTarget + "/delete");
    assertThat(preview.status()).isEqualTo(200);
    assertThat(preview.body())
        .contains(
            "id=\"replan-preview\" data-target=\"" + failingTarget + "\"",
            "It goes from primed back to pending_backfill, its failure streak of 5 reset");
    assertThat(afterPreview).isEqualTo("primed 5");
    assertThat(auditedByPreview).isZero();
    assertThat(replan.status()).isEqualTo(303);
    assertThat(replan.location()).isEqualTo("/ui/targets?notice=replanned");
    assertThat(
            data.text(
                "select state || ' ' || consecutive_failures from targets where name = ?",
                failingTarget))
        .isEqualTo("pending_backfill 0");
    assertThat(
            data.text(
                "select actor || ' ' || action || ' ' || outcome || ' ' || status"
                    + " from audit_events where id > ? and target = ?",
                mark,
                failingTarget))
        .isEqualTo("operator target.replan accepted 303");
    assertThat(browser.get("/ui/targets?notice=replanned").body()).contains("Target replanned");
  }

  @Test
  void anOperatorDeletesATargetAndItIsAudited() {
    data.target(failingTarget, backfill, "pending_backfill", 2);
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/targets").csrf();
    long mark = lastAuditId();

    UiClient.Page answer =
        browser.post("/ui/targets/" + failingTarget + "/delete", Map.of("_csrf", token));

    assertThat(answer.status()).isEqualTo(303);
    assertThat(answer.location()).isEqualTo("/ui/targets?notice=deleted");
    assertThat(data.count("select count(*) from targets where name = ?", failingTarget)).isZero();
    assertThat(
            data.text(
                "select actor || ' ' || action || ' ' || outcome || ' ' || status"
                    + " from audit_events where id > ? and target = ?",
                mark,
                failingTarget))
        .isEqualTo("operator target.delete accepted 303");
  }

  @Test
  void aTargetActionTheApiRefusesShowsTheApisDetailAndIsAuditedAsRejected() {
    String missing = TestData.uniqueTarget();
    Api.Reply fromApi = new Api(client, json).post("/api/targets/" + missing + "/replan", "");
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/targets").csrf();
    long mark = lastAuditId();

    UiClient.Page replan =
        browser.post(
            "/ui/targets/" + missing + "/replan", Map.of("_csrf", token, "intent", "replan"));
    UiClient.Page delete =
        browser.post("/ui/targets/" + missing + "/delete", Map.of("_csrf", token));

    assertThat(fromApi.status()).isEqualTo(404);
    String detail = (String) fromApi.object().get("detail");
    assertThat(replan.status()).isEqualTo(404);
    assertThat(replan.body()).contains("id=\"action-error\"", escaped(detail));
    assertThat(delete.status()).isEqualTo(404);
    assertThat(
            data.text(
                "select string_agg(action || ' ' || outcome || ' ' || status || ' ' || problem,"
                    + " ' | ' order by id) from audit_events where id > ? and target = ?",
                mark,
                missing))
        .isEqualTo(
            "target.replan rejected 404 " + detail + " | target.delete rejected 404 " + detail);
  }

  @Test
  void theThrottlePageShowsTheBrakeAndPools() {
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page page = browser.get("/ui/throttle");

    assertThat(page.status()).isEqualTo(200);
    assertThat(page.body()).contains("id=\"brake\"", "Pools");
  }

  @Test
  void anOperatorPutsTheBrakeOnAndOffAndAViewerCannot() {
    browser.signIn(Api.VIEWER_TOKEN);
    String viewerPage = browser.get("/ui/throttle").body();
    UiClient.Page viewerHold =
        browser.post("/ui/throttle/hold", Map.of("_csrf", csrfOf(viewerPage), "reason", "viewer"));
    UiClient operator = new UiClient(server.getURI());
    operator.signIn(Api.OPERATOR_TOKEN);
    String token = operator.get("/ui/throttle").csrf();

    UiClient.Page blank = operator.post("/ui/throttle/hold", Map.of("_csrf", token, "reason", ""));
    UiClient.Page held =
        operator.post("/ui/throttle/hold", Map.of("_csrf", token, "reason", "ui test " + backfill));
    String whileHeld = operator.get("/ui/throttle").body();
    UiClient.Page released = operator.post("/ui/throttle/release", Map.of("_csrf", token));

    assertThat(viewerPage).doesNotContain("/ui/throttle/hold");
    assertThat(viewerHold.status()).isEqualTo(403);
    assertThat(blank.status()).isEqualTo(400);
    assertThat(blank.body()).contains("reason: is required");
    assertThat(held.status()).isEqualTo(303);
    assertThat(whileHeld).contains("by operator: ui test " + backfill, "/ui/throttle/release");
    assertThat(released.status()).isEqualTo(303);
    assertThat(operator.get("/ui/throttle").body()).contains("The brake is off.");
  }

  @Test
  void anOperatorSetsAPoolsSizeWithTheApisRules() {
    String pool = "ui-" + backfill.substring(backfill.indexOf('.') + 1);
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/throttle").csrf();
    try {
      UiClient.Page bad =
          browser.post("/ui/pools", Map.of("_csrf", token, "name", pool, "size", "lots"));
      UiClient.Page set =
          browser.post("/ui/pools", Map.of("_csrf", token, "name", pool, "size", "4"));

      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.body()).contains("size:");
      assertThat(data.count("select count(*) from pools where name = ?", pool)).isEqualTo(1);
      assertThat(set.status()).isEqualTo(303);
      assertThat(browser.get("/ui/throttle").body()).contains("data-pool=\"" + pool + "\"");
    } finally {
      data.sql("delete from pools where name = ?", pool);
    }
  }

  private static String csrfOf(String page) {
    java.util.regex.Matcher matcher =
        java.util.regex.Pattern.compile("name=\"_csrf\" value=\"([^\"]*)\"").matcher(page);
    assertThat(matcher.find()).isTrue();
    return matcher.group(1);
  }

  @Test
  void signingOutEndsTheSession() {
    browser.signIn(Api.VIEWER_TOKEN);
    String token = browser.get("/ui/runs").csrf();

    UiClient.Page answer = browser.post("/ui/logout", Map.of("_csrf", token));

    assertThat(answer.status()).isEqualTo(303);
    assertThat(browser.cookie(UiSessions.COOKIE)).isNull();
    assertThat(browser.get("/ui/runs").status()).isEqualTo(303);
  }

  @Test
  void aRunThatDoesNotExistIsA404Page() {
    browser.signIn(Api.VIEWER_TOKEN);

    UiClient.Page page = browser.get("/ui/runs/999999999");
    UiClient.Page notAnId = browser.get("/ui/runs/x1");

    assertThat(page.status()).isEqualTo(404);
    assertThat(page.body()).contains("<html", "999999999");
    assertThat(notAnId.status()).isEqualTo(404);
  }

  @Test
  void theAssetsAreOpen() {
    assertThat(browser.get("/ui/assets/dashboard.css").status()).isEqualTo(200);
    assertThat(browser.get("/ui/assets/dashboard.js").status()).isEqualTo(200);
    assertThat(browser.get("/ui/assets/other.js").status()).isEqualTo(404);
  }

  private long lastAuditId() {
    return data.count("select coalesce(max(id), 0) from audit_events");
  }

  private static String escaped(String text) {
    return text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;")
        .replace("'", "&#39;");
  }
}
