package dev.dripline.app.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.store.throttle.BrakeRepository;
import dev.dripline.store.throttle.CheckOverrideRepository;
import dev.dripline.store.throttle.CheckRowRepository;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The throttle API over the brake, the evaluator's rows and the runtime overrides. */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class ThrottleIT {
  private static final String OVER = "throttle-it-over";
  private static final String UNKNOWN = "throttle-it-unknown";

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject CheckRowRepository rows;
  @Inject CheckOverrideRepository overrides;
  @Inject BrakeRepository brake;

  @BeforeEach
  void setUp() {
    brake.release();
  }

  @AfterEach
  void tearDown() {
    rows.deleteByName(OVER);
    rows.deleteByName(UNKNOWN);
    overrides.deleteByName(OVER);
    brake.release();
  }

  private Api operator() {
    return new Api(client, json, Api.OPERATOR_TOKEN);
  }

  private Api viewer() {
    return new Api(client, json, Api.VIEWER_TOKEN);
  }

  @Test
  void aViewerSeesEveryChecksLastEvaluationAndNoHold() {
    Instant since = Instant.parse("2026-01-01T00:00:00Z");
    Instant evaluated = since.plusSeconds(10);
    rows.record(OVER, "sql", 12.5, 10, 8, "over", true, since, evaluated, null, new String[0]);
    rows.record(
        UNKNOWN,
        "replica-lag",
        null,
        30,
        24,
        "unknown",
        false,
        since,
        evaluated,
        "the query returned NULL",
        new String[0]);

    Api.Reply reply = viewer().get("/api/throttle");

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.object()).containsKey("hold").containsEntry("hold", null);
    List<Map<String, Object>> checks = checks(reply);
    Map<String, Object> over = byName(checks, OVER);
    assertThat(over)
        .containsEntry("kind", "sql")
        .containsEntry("value", 12.5)
        .containsEntry("threshold", 10.0)
        .containsEntry("resumeBelow", 8.0)
        .containsEntry("state", "over")
        .containsEntry("holding", true)
        .containsEntry("error", null)
        .containsEntry("override", null);
    assertThat(Instant.parse((String) over.get("since"))).isEqualTo(since);
    assertThat(Instant.parse((String) over.get("evaluatedAt"))).isEqualTo(evaluated);
    Map<String, Object> unknown = byName(checks, UNKNOWN);
    assertThat(unknown)
        .containsEntry("value", null)
        .containsEntry("state", "unknown")
        .containsEntry("holding", false)
        .containsEntry("error", "the query returned NULL");
    assertThat(checks.indexOf(over)).isLessThan(checks.indexOf(unknown));
  }

  @Test
  void anInfiniteReadingShowsAsTheStringInfinity() {
    Instant since = Instant.parse("2026-01-01T00:00:00Z");
    rows.record(
        OVER,
        "prometheus",
        Double.POSITIVE_INFINITY,
        10,
        8,
        "over",
        true,
        since,
        since,
        null,
        new String[0]);

    Api.Reply reply = viewer().get("/api/throttle");

    assertThat(reply.status()).isEqualTo(200);
    assertThat(byName(checks(reply), OVER))
        .containsEntry("kind", "prometheus")
        .containsEntry("value", "Infinity")
        .containsEntry("state", "over");
  }

  @Test
  void theBrakeHoldsUntilReleasedAndASecondHoldKeepsTheFirst() {
    Api.Reply held = operator().post("/api/throttle/hold", "{\"reason\": \"failover drill\"}");

    assertThat(held.status()).isEqualTo(200);
    Map<String, Object> hold = hold(held);
    assertThat(hold).containsEntry("who", "operator").containsEntry("reason", "failover drill");
    Instant since = Instant.parse((String) hold.get("since"));

    Api.Reply again = operator().post("/api/throttle/hold", "{\"reason\": \"another\"}");
    assertThat(again.status()).isEqualTo(200);
    assertThat(hold(again)).containsEntry("reason", "failover drill");
    assertThat(Instant.parse((String) hold(again).get("since"))).isEqualTo(since);
    assertThat(hold(viewer().get("/api/throttle"))).containsEntry("reason", "failover drill");

    // A fresh application context (a restarted app) reads the same brake.
    try (ApplicationContext fresh =
        ApplicationContext.run(Map.of("dripline.temporal.address", "127.0.0.1:1"), "test")) {
      HoldResponse restarted = fresh.getBean(ThrottleService.class).current().hold();
      assertThat(restarted).isNotNull();
      assertThat(restarted.reason()).isEqualTo("failover drill");
      assertThat(restarted.who()).isEqualTo("operator");
    }

    Api.Reply released = operator().post("/api/throttle/release", "");
    assertThat(released.status()).isEqualTo(200);
    assertThat(released.object()).containsEntry("hold", null);
    assertThat(brake.current()).isEmpty();
    assertThat(operator().post("/api/throttle/release", "").status()).isEqualTo(200);
  }

  @Test
  void aViewerCannotHoldReleaseOrChange() {
    rows.record(
        OVER, "sql", 12.5, 10, 8, "over", true, Instant.now(), Instant.now(), null, new String[0]);

    assertThat(viewer().post("/api/throttle/hold", "{\"reason\": \"x\"}").status()).isEqualTo(403);
    assertThat(brake.current()).isEmpty();
    operator().post("/api/throttle/hold", "{\"reason\": \"kept\"}");
    assertThat(viewer().post("/api/throttle/release", "").status()).isEqualTo(403);
    assertThat(brake.current()).isPresent();
    assertThat(viewer().patch("/api/throttle/checks/" + OVER, "{\"threshold\": 20}").status())
        .isEqualTo(403);
    assertThat(overrides.findByName(OVER)).isEmpty();
    assertThat(new Api(client, json, null).get("/api/throttle").status()).isEqualTo(401);
  }

  @Test
  void aBadHoldNamesItsFieldAndHoldsNothing() {
    for (String body :
        List.of("{}", "{\"reason\": 5}", "{\"reason\": \"  \"}", "{\"reason\": null}")) {
      Api.Reply reply = operator().post("/api/throttle/hold", body);

      assertThat(reply.status()).as(body).isEqualTo(400);
      assertThat(reply.errorFields()).as(body).containsExactly("reason");
    }
    Api.Reply unknownField =
        operator().post("/api/throttle/hold", "{\"reason\": \"r\", \"why\": \"w\"}");
    assertThat(unknownField.status()).isEqualTo(400);
    assertThat(unknownField.errorFields()).containsExactly("why");
    assertThat(brake.current()).isEmpty();
  }

  @Test
  void aChangedThresholdIsStoredAndShownInEffect() {
    rows.record(
        OVER, "sql", 12.5, 10, 8, "over", true, Instant.now(), Instant.now(), null, new String[0]);

    Api.Reply changed = operator().patch("/api/throttle/checks/" + OVER, "{\"threshold\": 20}");

    assertThat(changed.status()).isEqualTo(200);
    Map<String, Object> check = byName(checks(changed), OVER);
    assertThat(check).containsEntry("threshold", 20.0).containsEntry("resumeBelow", 8.0);
    @SuppressWarnings("unchecked")
    Map<String, Object> override = (Map<String, Object>) check.get("override");
    assertThat(override)
        .containsEntry("threshold", 20.0)
        .containsEntry("resumeBelow", null)
        .containsEntry("changedBy", "operator");

    assertThat(operator().patch("/api/throttle/checks/" + OVER, "{\"resumeBelow\": 15.5}").status())
        .isEqualTo(200);
    assertThat(overrides.findByName(OVER).orElseThrow().threshold()).isEqualTo(20.0);
    assertThat(overrides.findByName(OVER).orElseThrow().resumeBelow()).isEqualTo(15.5);
    assertThat(byName(checks(viewer().get("/api/throttle")), OVER))
        .containsEntry("threshold", 20.0)
        .containsEntry("resumeBelow", 15.5);
  }

  @Test
  void aBadChangeNamesItsFieldAndChangesNothing() {
    rows.record(
        OVER, "sql", 12.5, 10, 8, "over", true, Instant.now(), Instant.now(), null, new String[0]);

    assertBadChange("no-such-check", "{\"threshold\": 20}", "name");
    assertBadChange(OVER, "{\"threshold\": \"20\"}", "threshold");
    assertBadChange(OVER, "{\"threshold\": true}", "threshold");
    assertBadChange(OVER, "{\"resumeBelow\": [1]}", "resumeBelow");
    assertBadChange(OVER, "{\"resumeBelow\": 11}", "resumeBelow");
    assertBadChange(OVER, "{\"threshold\": 5}", "resumeBelow");
    assertBadChange(OVER, "{\"threshold\": 20, \"resumeBelow\": 21}", "resumeBelow");
    assertBadChange(OVER, "{}", "body");
    assertBadChange(OVER, "{\"limit\": 3}", "limit");
    assertThat(overrides.findByName(OVER)).isEmpty();
    assertThat(overrides.findByName("no-such-check")).isEmpty();
  }

  @Test
  void aThresholdThatIsNotAFiniteNumberNamesItsFieldAndChangesNothing() {
    rows.record(
        OVER, "sql", 12.5, 10, 8, "over", true, Instant.now(), Instant.now(), null, new String[0]);

    assertBadChange(OVER, "{\"threshold\": \"NaN\"}", "threshold");
    assertBadChange(OVER, "{\"threshold\": \"Infinity\"}", "threshold");
    assertBadChange(OVER, "{\"threshold\": 1e309}", "threshold");
    assertBadChange(OVER, "{\"threshold\": -1e309}", "threshold");
    assertBadChange(OVER, "{\"resumeBelow\": -1e309}", "resumeBelow");
    assertBadChange(OVER, "{\"threshold\": {\"value\": 20}}", "threshold");
    // NaN and Infinity unquoted are not JSON: the body itself is refused, with where it fails.
    assertBadChange(OVER, "{\"threshold\": NaN}", "body");
    assertBadChange(OVER, "{\"threshold\": Infinity}", "body");
    assertThat(overrides.findByName(OVER)).isEmpty();
  }

  @Test
  void anUnknownCheckWithABadThresholdNamesBothAndWritesNothing() {
    Api.Reply reply =
        operator().patch("/api/throttle/checks/no-such-check", "{\"threshold\": \"high\"}");

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactly("name", "threshold");
    assertThat(overrides.findByName("no-such-check")).isEmpty();
  }

  private void assertBadChange(String name, String body, String field) {
    Api.Reply reply = operator().patch("/api/throttle/checks/" + name, body);

    assertThat(reply.status()).as(body).isEqualTo(400);
    assertThat(reply.contentType()).as(body).startsWith("application/problem+json");
    assertThat(reply.errorFields()).as(body).containsExactly(field);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> hold(Api.Reply reply) {
    return (Map<String, Object>) reply.object().get("hold");
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> checks(Api.Reply reply) {
    return (List<Map<String, Object>>) reply.object().get("checks");
  }

  private static Map<String, Object> byName(List<Map<String, Object>> checks, String name) {
    return checks.stream()
        .filter(check -> name.equals(check.get("name")))
        .findFirst()
        .orElseThrow();
  }
}
