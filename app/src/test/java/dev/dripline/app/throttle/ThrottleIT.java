package dev.dripline.app.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.store.throttle.CheckRowRepository;
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
import org.junit.jupiter.api.Test;

/** {@code GET /api/throttle} over the rows the workers' evaluator records. */
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

  @AfterEach
  void tearDown() {
    rows.deleteByName(OVER);
    rows.deleteByName(UNKNOWN);
  }

  @Test
  void aViewerSeesEveryChecksLastEvaluationAndNoHold() {
    Instant since = Instant.parse("2026-01-01T00:00:00Z");
    Instant evaluated = since.plusSeconds(10);
    rows.record(OVER, "sql", 12.5, 10, 8, "over", true, since, evaluated, null);
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
        "the query returned NULL");

    Api.Reply reply = new Api(client, json, Api.VIEWER_TOKEN).get("/api/throttle");

    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.object()).containsKey("hold").containsEntry("hold", null);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> checks = (List<Map<String, Object>>) reply.object().get("checks");
    Map<String, Object> over = byName(checks, OVER);
    assertThat(over)
        .containsEntry("kind", "sql")
        .containsEntry("value", 12.5)
        .containsEntry("threshold", 10.0)
        .containsEntry("resumeBelow", 8.0)
        .containsEntry("state", "over")
        .containsEntry("holding", true)
        .containsEntry("error", null);
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

  private static Map<String, Object> byName(List<Map<String, Object>> checks, String name) {
    return checks.stream()
        .filter(check -> name.equals(check.get("name")))
        .findFirst()
        .orElseThrow();
  }
}
