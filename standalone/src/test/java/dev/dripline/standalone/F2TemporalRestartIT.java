package dev.dripline.standalone;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * F2 — Temporal restart. The test starts its own Temporal dev server (env {@code TEMPORAL_CLI}, a
 * free port on 127.0.0.1, state in a SQLite file in a temp dir via {@code --db-filename}) and an
 * app and a worker JVM on it. Injects: SIGKILL of the dev server in the middle of two runs
 * (normalize-emails and an example.sleep witness, cap 8), {@link FaultSizes#temporalDownSeconds()}
 * seconds down, then a new dev server on the same port and the same database file.
 *
 * <p>Asserts afterwards: both runs completed, with exact counts ({@link FaultRun#assertExact}:
 * every batch completed and counted once, repeated attempts at most the cap); the cap held (slot
 * holders sampled ≤ 8, witness {@code max_seen} ≤ 8); every seeded row normalised; app and worker
 * still alive — they reconnected by themselves.
 */
class F2TemporalRestartIT {
  private final String tag = "f2-" + UUID.randomUUID().toString().substring(0, 8);
  private Path dir;
  private DevServer temporal;
  private FaultStack stack;

  @AfterEach
  void stopProcesses() throws Exception {
    try {
      if (stack != null) {
        stack.close();
      }
    } finally {
      if (temporal != null) {
        temporal.close();
      }
    }
  }

  @Test
  void runsCompleteExactlyAcrossAKilledAndRestartedTemporalServer() throws Exception {
    dir = Files.createTempDirectory("dripline-f2-");
    temporal = new DevServer(dir.resolve("temporal.db"));
    temporal.start();
    stack = new FaultStack(tag, TestDb.URL, temporal.address(), Map.of()).start();
    int downSeconds = FaultSizes.current().temporalDownSeconds();
    FaultScenario.run(
        stack,
        "F2",
        tag,
        () -> {
          temporal.kill();
          Thread.sleep(downSeconds * 1000L);
          temporal.start();
        });
  }
}
