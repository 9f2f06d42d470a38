package dev.dripline.app.ui;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.RunWorkflowIds;
import io.micronaut.context.annotation.Property;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.client.WorkflowClient;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's actions in the audit trail (O4), against the real PostgreSQL and a real Temporal
 * server with no worker (signals are taken, a dry run goes unanswered): a run started and paused
 * from the dashboard is recorded with the session's role as the actor, as the API's actions are,
 * and a preview is not recorded. Refusals are {@code DashboardIT}'s.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.task-queue", value = "dripline-app-it-no-worker")
@Property(name = "dripline.api.dry-run-timeout", value = "2s")
class DashboardAuditIT {
  @Inject EmbeddedServer server;
  @Inject Database database;
  @Inject WorkflowClient workflows;
  @Inject TemporalConfig temporal;

  private TestData data;
  private UiClient browser;
  private final String backfill = TestData.uniqueName();
  private final List<Long> runs = new ArrayList<>();

  @BeforeEach
  void setUp() {
    assumeTrue(
        TestData.reachable(temporal.address()), "no Temporal server at " + temporal.address());
    data = new TestData(database);
    data.definition(backfill, 10, 2);
    browser = new UiClient(server.getURI());
  }

  @AfterEach
  void tearDown() {
    if (data == null) {
      return;
    }
    for (long id : runs) {
      try {
        workflows.newUntypedWorkflowStub(RunWorkflowIds.forRun(id)).terminate("test over");
      } catch (RuntimeException e) {
        // already closed
      }
    }
    data.cleanUp(backfill);
  }

  @Test
  void aRunStartedAndPausedFromTheDashboardIsRecordedWithTheOperatorAsActor() {
    browser.signIn(Api.OPERATOR_TOKEN);
    String token = browser.get("/ui/runs/new?backfill=" + backfill).csrf();
    Map<String, String> form =
        Map.of("_csrf", token, "backfill", backfill, "options.items", "5", "intent", "preview");
    long mark = data.count("select coalesce(max(id), 0) from audit_events");

    UiClient.Page preview = browser.post("/ui/runs/new", form);
    UiClient.Page started =
        browser.post(
            "/ui/runs/new",
            Map.of("_csrf", token, "backfill", backfill, "options.items", "5", "intent", "start"));
    assertThat(started.status()).isEqualTo(303);
    long id =
        Long.parseLong(started.location().replaceAll("^/ui/runs/(\\d+)\\?notice=started$", "$1"));
    runs.add(id);
    UiClient.Page paused = browser.post("/ui/runs/" + id + "/pause", Map.of("_csrf", token));

    assertThat(preview.status()).isEqualTo(503);
    assertThat(paused.status()).isEqualTo(303);
    assertThat(
            data.text(
                "select string_agg(actor || ' ' || action || ' ' || coalesce(run_id::text, '-')"
                    + " || ' ' || outcome || ' ' || status, '; ' order by id desc)"
                    + " from audit_events where id > ?",
                mark))
        .isEqualTo(
            "operator run.pause "
                + id
                + " accepted 303; operator run.create "
                + id
                + " accepted 303");
    assertThat(
            data.text(
                "select detail from audit_events where id > ? and action = 'run.create'", mark))
        .isEqualTo("{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":5}}");
    assertThat(browser.get("/ui/runs/" + id).body())
        .contains(
            "data-action=\"run.pause\" data-outcome=\"accepted\"",
            "data-action=\"run.create\" data-outcome=\"accepted\"");
  }
}
