package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dripline.cli.DriplineCli;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@code dripline} command line (O5) end to end: its main entry, run in this JVM with an
 * environment of the test's own, against the app and a worker on real PostgreSQL and the Temporal
 * dev server (a task queue of the test's own). It starts a run of {@code example.sleep}, watches it
 * to completion, and meets each exit code with the API's own words on stderr.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliIT implements TestPropertyProvider {
  private static final String TAG = "cli-" + UUID.randomUUID().toString().substring(0, 8);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern STARTED = Pattern.compile("started run (\\d+) ");

  @Inject EmbeddedServer server;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of("dripline.temporal.task-queue", "dripline-" + TAG);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  @AfterAll
  void dropPool() {
    TestDb.execute("delete from pools where name = ?", TAG);
  }

  /**
   * @param exitCode what the process would exit with
   * @param out its stdout
   * @param err its stderr
   */
  record Outcome(int exitCode, String out, String err) {}

  private Outcome dripline(String token, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Map<String, String> env =
        Map.of("DRIPLINE_URL", server.getURI().toString(), "DRIPLINE_TOKEN", token);
    int code =
        DriplineCli.run(args, env, new PrintWriter(out, true), new PrintWriter(err, true), false);
    return new Outcome(code, out.toString(), err.toString());
  }

  private Outcome operator(String... args) {
    return dripline(Api.OPERATOR_TOKEN, args);
  }

  private long startSleepRun(String tag) {
    Outcome started =
        operator(
            "runs",
            "start",
            "example.sleep",
            "-o",
            "items=40",
            "-o",
            "sleepMs=20",
            "-o",
            "faultTag=" + TAG + "-" + tag,
            "--batch-size",
            "5",
            "--max-parallel",
            "3");
    assertThat(started.exitCode()).as(started.err()).isZero();
    Matcher id = STARTED.matcher(started.out());
    assertThat(id.find()).as(started.out()).isTrue();
    return Long.parseLong(id.group(1));
  }

  @Test
  void aRunStartedFromTheCommandLineIsWatchedToCompletionAndShownAsJson() throws Exception {
    long id = startSleepRun("watch");

    Outcome watched = operator("runs", "watch", String.valueOf(id), "--interval", "0.2");

    assertThat(watched.exitCode()).as(watched.err()).isZero();
    assertThat(watched.err()).isEmpty();
    assertThat(watched.out().lines().toList().get((int) watched.out().lines().count() - 1))
        .startsWith("run " + id + " completed")
        .contains("100%", "40/40 keys", "took ");
    Outcome shown = operator("runs", "show", String.valueOf(id), "--json");
    assertThat(shown.exitCode()).isZero();
    JsonNode run = JSON.readTree(shown.out());
    assertThat(run.path("id").asLong()).isEqualTo(id);
    assertThat(run.path("status").asText()).isEqualTo("completed");
    assertThat(run.path("batchCounts").path("completed").asInt()).isEqualTo(8);
    assertThat(run).isEqualTo(api.get("/api/runs/" + id).body());
    Outcome listed =
        operator("runs", "list", "--backfill", "example.sleep", "--status", "completed");
    assertThat(listed.exitCode()).isZero();
    assertThat(listed.out()).containsPattern("(?m)^" + id + " +example\\.sleep +completed +100%");
  }

  @Test
  void stoppingAFinishedRunIsRefusedWithTheApisDetailAndAViewerMayNotStopIt() {
    long id = startSleepRun("refused");
    assertThat(operator("runs", "watch", String.valueOf(id), "--interval", "0.2").exitCode())
        .isZero();

    Outcome stop = operator("runs", "stop", String.valueOf(id));
    Outcome viewerStop = dripline("dev-viewer", "runs", "stop", String.valueOf(id));

    Api.Response conflict = api.post("/api/runs/" + id + "/stop", Map.of());
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(stop.exitCode()).isEqualTo(1);
    assertThat(stop.out()).isEmpty();
    assertThat(stop.err()).isEqualTo("dripline: " + conflict.body().path("detail").asText() + "\n");
    assertThat(viewerStop.exitCode()).isEqualTo(4);
    assertThat(viewerStop.err()).contains("may only read");
    assertThat(dripline("not-a-token", "runs", "show", String.valueOf(id)).exitCode()).isEqualTo(4);
  }

  @Test
  void anUnknownRunOrTargetIsNotFound() {
    Outcome run = operator("runs", "show", "987654321098");
    Outcome target = operator("targets", "show", TAG);

    assertThat(run.exitCode()).isEqualTo(3);
    assertThat(run.err()).isEqualTo("dripline: no run with id 987654321098\n");
    assertThat(target.exitCode()).isEqualTo(3);
    assertThat(target.err()).startsWith("dripline: no target named");
  }

  @Test
  void aBadOptionGetsTheApisErrorForItsFieldAndStartsNothing() {
    long before = TestDb.queryLong("select count(*) from runs");

    Outcome bad =
        operator("runs", "start", "example.sleep", "-o", "items=lots", "--max-parallel", "0");

    assertThat(bad.exitCode()).isEqualTo(1);
    assertThat(bad.out()).isEmpty();
    assertThat(bad.err().lines())
        .anySatisfy(line -> assertThat(line).startsWith("  options.items: "))
        .anySatisfy(line -> assertThat(line).startsWith("  maxParallelBatches: "));
    assertThat(TestDb.queryLong("select count(*) from runs")).isEqualTo(before);
  }

  @Test
  void aDryRunPreviewsThePlanAndPoolsAreSetAndListed() {
    Outcome dryRun =
        operator(
            "runs",
            "start",
            "example.sleep",
            "-o",
            "items=40",
            "-o",
            "faultTag=" + TAG + "-dry",
            "--batch-size",
            "5",
            "--dry-run");
    Outcome set = operator("pools", "set", TAG, "2");
    Outcome listed = operator("pools", "list");

    assertThat(dryRun.exitCode()).as(dryRun.err()).isZero();
    assertThat(dryRun.out()).contains("would start  yes").contains("batches      8 of 5 keys");
    assertThat(set.exitCode()).as(set.err()).isZero();
    assertThat(listed.out()).containsPattern("(?m)^" + TAG + " +2 +0 +0$");
    assertThat(dripline("dev-viewer", "pools", "set", TAG, "3").exitCode()).isEqualTo(4);
  }
}
