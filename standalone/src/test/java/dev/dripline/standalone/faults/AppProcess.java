package dev.dripline.standalone.faults;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/**
 * The HTTP API as its own JVM ({@code dev.dripline.app.AppApplication}, no worker), on a free port
 * on 127.0.0.1 — what F4 kills in the middle of a burst of requests, and what the read load test
 * measures apart from the worker.
 */
final class AppProcess {
  private AppProcess() {}

  /** Starts the app on {@code taskQueue} and waits until {@code /health} answers 200. */
  static ChildJvm start(String name, String taskQueue, Map<String, String> env)
      throws IOException, InterruptedException {
    return ChildJvm.start(
            name, "dev.dripline.app.AppApplication", "DRIPLINE_HTTP_PORT", taskQueue, env)
        .awaitHealthy(Duration.ofSeconds(90));
  }

  /**
   * Starts a worker JVM ({@code dev.dripline.worker.WorkerApplication}) on {@code taskQueue} and
   * waits until it serves {@code /health}; it publishes the catalogue at start-up.
   */
  static ChildJvm startWorker(String name, String taskQueue, Map<String, String> env)
      throws IOException, InterruptedException {
    return ChildJvm.start(
            name,
            "dev.dripline.worker.WorkerApplication",
            "DRIPLINE_WORKER_HTTP_PORT",
            taskQueue,
            env)
        .awaitHealthy(Duration.ofSeconds(90));
  }
}
