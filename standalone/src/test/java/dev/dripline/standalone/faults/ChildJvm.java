package dev.dripline.standalone.faults;

import dev.dripline.standalone.LocalPorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Dripline JVM (the app or a worker) started from the test classpath against the test database
 * and Temporal server, listening on its own HTTP port on 127.0.0.1, so a fault-injection test can
 * kill it with SIGKILL and start it again. A shutdown hook kills whatever is still running when the
 * test JVM exits, so a failed or interrupted test leaves no orphan process behind.
 */
class ChildJvm implements AutoCloseable {
  private static final List<Process> LIVE = new ArrayList<>();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  synchronized (LIVE) {
                    LIVE.forEach(Process::destroyForcibly);
                  }
                }));
  }

  private final String name;
  private final Process process;
  private final URI base;
  private final Path log;

  ChildJvm(String name, Process process, URI base, Path log) {
    this.name = name;
    this.process = process;
    this.base = base;
    this.log = log;
  }

  /** The test database's JDBC URL, as {@code bin/dripline-test} exports it. */
  static String databaseUrl() {
    return System.getenv()
        .getOrDefault(
            "DRIPLINE_TEST_DB_URL",
            "jdbc:postgresql://127.0.0.1:5432/dripline_test?sslmode=disable");
  }

  /** The test Temporal server, as {@code bin/dripline-test} exports it. */
  static String temporalAddress() {
    return System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243");
  }

  /**
   * Starts {@code mainClass} with the test's classpath.
   *
   * @param portVariable the environment variable that sets its HTTP port
   * @param env further environment; wins over the defaults set here
   */
  static ChildJvm start(
      String name, String mainClass, String portVariable, String taskQueue, Map<String, String> env)
      throws IOException {
    int port = LocalPorts.free();
    Path log = Files.createTempFile("dripline-" + name + "-", ".log");
    ProcessBuilder builder =
        new ProcessBuilder(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                mainClass));
    Map<String, String> environment = builder.environment();
    environment.put("DRIPLINE_DB_URL", databaseUrl());
    environment.put("DRIPLINE_DB_POOL_SIZE", "16");
    environment.put("TEMPORAL_ADDRESS", temporalAddress());
    environment.put("DRIPLINE_TASK_QUEUE", taskQueue);
    environment.put("DRIPLINE_HTTP_HOST", "127.0.0.1");
    environment.put(portVariable, Integer.toString(port));
    // Test classes share one database: a reconciler would adopt other classes' runs.
    environment.put("DRIPLINE_WORKER_RECONCILE", "false");
    environment.put("DRIPLINE_OPERATOR_TOKEN", OperatorApi.OPERATOR_TOKEN);
    environment.put("DRIPLINE_VIEWER_TOKEN", "dev-viewer");
    environment.putAll(env);
    builder.redirectErrorStream(true).redirectOutput(log.toFile());
    Process process = builder.start();
    synchronized (LIVE) {
      LIVE.add(process);
    }
    System.out.println(name + " (" + mainClass + ", port " + port + ") logs to " + log);
    return new ChildJvm(name, process, URI.create("http://127.0.0.1:" + port), log);
  }

  URI base() {
    return base;
  }

  Path log() {
    return log;
  }

  /** Waits until {@code /health} answers 200; fails early if the process died. */
  ChildJvm awaitHealthy(Duration timeout) throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + "; " + log);
      }
      try {
        HttpResponse<Void> response =
            http.send(
                HttpRequest.newBuilder(base.resolve("/health"))
                    .timeout(Duration.ofSeconds(5))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.discarding());
        if (response.statusCode() == 200) {
          return this;
        }
      } catch (IOException e) {
        // Not listening yet.
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException(name + " not healthy after " + timeout + "; " + log);
  }

  /** SIGKILL: no shutdown hook, no graceful close of connections or workers. */
  void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (LIVE) {
      LIVE.remove(process);
    }
  }

  boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public void close() {
    kill();
  }
}
