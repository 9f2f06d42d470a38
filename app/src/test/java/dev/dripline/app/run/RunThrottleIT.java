package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import dev.dripline.store.throttle.BrakeRepository;
import dev.dripline.store.throttle.CheckRowRepository;
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

/** A run's {@code throttle}: what holds it now, from the brake and the checks' rows. */
@MicronautTest(transactional = false)
class RunThrottleIT {
  private static final String LAG = "run-throttle-it-lag";
  private static final String ELSEWHERE = "run-throttle-it-elsewhere";

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;
  @Inject CheckRowRepository rows;
  @Inject BrakeRepository brake;

  private Api api;
  private TestData data;
  private final String backfill = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(backfill, 10, null);
    brake.release();
  }

  @AfterEach
  void tearDown() {
    rows.deleteByName(LAG);
    rows.deleteByName(ELSEWHERE);
    brake.release();
    data.cleanUp(backfill);
  }

  @Test
  void aRunningRunShowsTheBrakeAndEveryHoldingCheckThatAppliesToIt() {
    long id = data.run(backfill, "running", "{}");
    Instant lagSince = Instant.parse("2026-01-01T00:00:00Z");
    rows.record(
        LAG, "replica-lag", 42.0, 30, 24, "over", true, lagSince, lagSince, null, new String[0]);
    rows.record(
        ELSEWHERE,
        "sql",
        9.0,
        1,
        0.8,
        "over",
        true,
        lagSince,
        lagSince,
        null,
        new String[] {"some-other-backfill"});

    Map<String, Object> checked = throttle(id);
    assertThat(checked).containsEntry("throttled", true);
    assertThat(Instant.parse((String) checked.get("since"))).isEqualTo(lagSince);
    // Only this test's rows: the table is shared with every other test of the database.
    assertThat(ours(checked))
        .as("the reasons of %s", checked)
        .containsExactly(Map.of("check", LAG, "value", 42.0, "threshold", 30.0));

    brake.holdIfReleased("drill", "operator");
    Map<String, Object> braked = throttle(id);
    assertThat(ours(braked)).as("the reasons of %s", braked).hasSize(2);
    Map<String, Object> brakeReason = ours(braked).get(0);
    assertThat(brakeReason)
        .containsEntry("check", "brake")
        .containsEntry("value", null)
        .containsEntry("threshold", null);
    assertThat(Instant.parse((String) braked.get("since")))
        .as("the oldest hold")
        .isEqualTo(lagSince);

    rows.deleteByName(LAG);
    brake.release();
    Map<String, Object> free = throttle(id);
    assertThat(ours(free)).as("the reasons of %s", free).isEmpty();
  }

  @Test
  void aRunThatIsNotRunningHasNoThrottle() {
    long id = data.run(backfill, "paused", "{}");
    brake.holdIfReleased("drill", "operator");

    Map<String, Object> run = api.get("/api/runs/" + id).object();

    assertThat(run).containsKey("throttle").containsEntry("throttle", null);
  }

  @Test
  void theListShowsEachRunningRunsThrottle() {
    long id = data.run(backfill, "running", "{}");
    brake.holdIfReleased("drill", "operator");

    List<Map<String, Object>> items = api.get("/api/runs?backfill=" + backfill).items();

    assertThat(items).hasSize(1);
    assertThat(items.get(0)).containsEntry("id", (int) id);
    @SuppressWarnings("unchecked")
    Map<String, Object> throttle = (Map<String, Object>) items.get(0).get("throttle");
    assertThat(throttle).containsEntry("throttled", true);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> throttle(long id) {
    Api.Reply reply = api.get("/api/runs/" + id);
    assertThat(reply.status()).isEqualTo(200);
    return (Map<String, Object>) reply.object().get("throttle");
  }

  /** The reasons of {@code throttle} that this test's brake and check rows make. */
  private static List<Map<String, Object>> ours(Map<String, Object> throttle) {
    return reasons(throttle).stream()
        .filter(reason -> List.of("brake", LAG, ELSEWHERE).contains(reason.get("check")))
        .toList();
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> reasons(Map<String, Object> throttle) {
    return (List<Map<String, Object>>) throttle.get("reasons");
  }
}
