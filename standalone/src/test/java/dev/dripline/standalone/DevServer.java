package dev.dripline.standalone;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Temporal dev server of a test's own ({@code temporal server start-dev}, the CLI binary named by
 * env {@code TEMPORAL_CLI}) on a free port of 127.0.0.1 ({@link LocalPorts}), without the Web UI,
 * keeping its state in a SQLite file so it can be killed and started again with its workflows
 * intact. Dripline's search attributes are registered at start-up, as bin/lib.sh's start_temporal
 * does.
 */
final class DevServer implements AutoCloseable {
  private static final List<String> SEARCH_ATTRIBUTES =
      List.of("DriplineBackfill", "DriplineRunStatus", "DriplineTarget");

  private final String cli;
  private final int port;
  private final DriplineProcess process;

  DevServer(Path dbFile) throws IOException {
    cli = System.getenv("TEMPORAL_CLI");
    if (cli == null || cli.isBlank()) {
      throw new IllegalStateException(
          "env TEMPORAL_CLI (the Temporal CLI binary) is not set; run the tests with"
              + " bin/dripline-test, which sets it");
    }
    port = LocalPorts.free();
    List<String> command =
        new ArrayList<>(
            List.of(
                cli,
                "server",
                "start-dev",
                "--ip",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--headless",
                "--namespace",
                "default",
                "--log-level",
                "warn",
                "--db-filename",
                dbFile.toString()));
    for (String attribute : SEARCH_ATTRIBUTES) {
      command.add("--search-attribute");
      command.add(attribute + "=Keyword");
    }
    process = DriplineProcess.command("temporal-dev-" + port, command);
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  /** Starts the server and waits until its frontend reports SERVING. */
  void start() {
    process.start();
    awaitHealthy(Duration.ofSeconds(90));
  }

  /** SIGKILL: no graceful shutdown, whatever was not written to its database is lost. */
  void kill() {
    process.kill();
  }

  private void awaitHealthy(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.alive()) {
        throw new IllegalStateException(
            "the Temporal dev server exited during start-up:\n" + process.tail(40));
      }
      if (healthy()) {
        return;
      }
      sleep(500);
    }
    throw new IllegalStateException(
        "the Temporal dev server is not healthy on " + address() + ":\n" + process.tail(40));
  }

  private boolean healthy() {
    try {
      Process health =
          new ProcessBuilder(cli, "operator", "cluster", "health", "--address", address())
              .redirectErrorStream(true)
              .start();
      if (!health.waitFor(10, TimeUnit.SECONDS)) {
        health.destroyForcibly();
        return false;
      }
      String out = new String(health.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return health.exitValue() == 0 && out.contains("SERVING") && !out.contains("NOT_SERVING");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    process.kill();
  }
}
