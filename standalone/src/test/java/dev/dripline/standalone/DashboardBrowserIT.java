package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The dashboard in a real browser: {@code ui-test/dashboard.test.mjs} drives Debian's chromium
 * (playwright-core, installed by {@code bin/lib.sh}'s {@code ensure_browser}) against the app and a
 * worker in this JVM on a task queue of the test's own. It signs in as the viewer (no control) and
 * as the operator, starts a run from the form after its dry-run preview, watches it progress,
 * pauses, resumes and stops it, sees a failed batch's error and a failing target. With {@code
 * DRIPLINE_SCREENSHOTS} set (bin/dripline-screenshots) it writes a PNG of each page there.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardBrowserIT implements TestPropertyProvider {
  private static final String TAG = "ui-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String TARGET = TAG + "-target";

  @Inject EmbeddedServer server;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue", "dripline-" + TAG,
        "dripline.targets.planner-backoff-base", "500ms",
        "dripline.targets.planner-backoff-cap", "1s",
        "dripline.ui.refresh-seconds", "1");
  }

  @Test
  void theDashboardWorksInARealBrowser() throws IOException, InterruptedException {
    // The second run's batch holding key 15 fails every attempt; the target's planning fails.
    TestDb.execute(
        "insert into example_faults(tag, phase, key) values (?, 'batch', 15)", TAG + "-fail");
    TestDb.execute("insert into example_faults(tag, phase) values (?, 'plan')", TARGET);
    Api.Response target =
        new Api(server.getURI())
            .post(
                "/api/targets",
                Map.of(
                    "name",
                    TARGET,
                    "backfill",
                    "example.copy-events",
                    "options",
                    Map.of("tenant", TARGET)));
    assertThat(target.status()).as("register the target: %s", target.body()).isEqualTo(201);

    Path uiTest = Path.of("").toAbsolutePath().getParent().resolve("ui-test");
    assertThat(uiTest.resolve("node_modules/playwright-core"))
        .as("ui-test's node packages (bin/lib.sh ensure_browser installs them)")
        .exists();
    Path output = Files.createTempFile("dripline-ui-test-", ".log");
    ProcessBuilder node =
        new ProcessBuilder(List.of("node", "dashboard.test.mjs"))
            .directory(uiTest.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile());
    Map<String, String> env = node.environment();
    env.put("DRIPLINE_URL", server.getURI().toString());
    env.put("UI_TEST_TAG", TAG);
    env.put("UI_TEST_TARGET", TARGET);
    env.putIfAbsent("DRIPLINE_CHROMIUM", "/usr/bin/chromium");
    String screenshots = System.getenv("DRIPLINE_SCREENSHOTS");
    if (screenshots != null && !screenshots.isBlank()) {
      env.put("UI_TEST_SCREENSHOTS", screenshots);
    }
    Process process = node.start();
    try {
      boolean ended = process.waitFor(10, TimeUnit.MINUTES);
      String log = Files.readString(output);
      System.out.println(log);
      assertThat(ended).as("the browser test ends within 10 minutes:%n%s", log).isTrue();
      assertThat(process.exitValue()).as("the browser test's exit code:%n%s", log).isZero();
    } finally {
      process.destroyForcibly();
      new Api(server.getURI()).delete("/api/targets/" + TARGET);
      TestDb.execute("delete from example_faults where tag like ?", TAG + "%");
    }
  }
}
