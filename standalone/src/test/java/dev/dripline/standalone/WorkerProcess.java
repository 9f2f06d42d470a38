package dev.dripline.standalone;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A worker JVM ({@code WorkerApplication}) started from the test classpath against the test
 * database and Temporal server, so a test can kill it or scrape it as a separate process.
 */
final class WorkerProcess {
  private WorkerProcess() {}

  /**
   * @param name names the log file
   * @param taskQueue the queue it polls
   * @param env further environment, e.g. {@code DRIPLINE_WORKER_HTTP_PORT}
   */
  static Process start(String name, String taskQueue, Map<String, String> env) throws IOException {
    Path log = Files.createTempFile("dripline-" + name, ".log");
    ProcessBuilder builder =
        new ProcessBuilder(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.dripline.worker.WorkerApplication"));
    Map<String, String> environment = builder.environment();
    environment.put("DRIPLINE_DB_URL", TestDb.URL);
    environment.put(
        "TEMPORAL_ADDRESS",
        System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"));
    environment.put("DRIPLINE_TASK_QUEUE", taskQueue);
    environment.put("DRIPLINE_WORKER_HTTP_PORT", "-1");
    environment.put("DRIPLINE_WORKER_RECONCILE", "false");
    environment.putAll(env);
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    System.out.println("worker " + name + " logs to " + log);
    return builder.start();
  }
}
