package dev.dripline.activities.throttle;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Prometheus (Debian's {@code prometheus} package, which {@code bin/dripline-test} installs
 * and names in {@code PROMETHEUS_BIN}; else {@code prometheus} on the PATH) on 127.0.0.1 and a free
 * port, with no scrape targets and its data in a temporary directory.
 */
@SuppressWarnings("try") // close waits for the process and says so
final class PrometheusServer implements AutoCloseable {
  private static final Duration READY_WITHIN = Duration.ofSeconds(90);

  private final Process process;
  private final Path directory;
  private final String url;

  private PrometheusServer(Process process, Path directory, String url) {
    this.process = process;
    this.directory = directory;
    this.url = url;
  }

  /** Starts one and waits until {@code /-/ready} answers 200. */
  static PrometheusServer start() throws IOException, InterruptedException {
    Path directory = Files.createTempDirectory("dripline-prometheus-it");
    Path config = directory.resolve("prometheus.yml");
    Files.writeString(config, "global:\n  scrape_interval: 1m\nscrape_configs: []\n");
    int port = freePort();
    String url = "http://127.0.0.1:" + port;
    Process process =
        new ProcessBuilder(
                List.of(
                    binary(),
                    "--config.file=" + config,
                    "--storage.tsdb.path=" + directory.resolve("data"),
                    "--web.listen-address=127.0.0.1:" + port,
                    "--log.level=warn"))
            .redirectErrorStream(true)
            .redirectOutput(directory.resolve("prometheus.log").toFile())
            .start();
    PrometheusServer server = new PrometheusServer(process, directory, url);
    try {
      server.awaitReady();
    } catch (RuntimeException | IOException | InterruptedException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /** Its base URL, {@code http://127.0.0.1:<port>}. */
  String url() {
    return url;
  }

  private void awaitReady() throws IOException, InterruptedException {
    HttpClient client = HttpClient.newHttpClient();
    HttpRequest ready =
        HttpRequest.newBuilder(URI.create(url + "/-/ready")).timeout(Duration.ofSeconds(5)).build();
    long deadline = System.nanoTime() + READY_WITHIN.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("prometheus exited at start-up:\n" + log());
      }
      try {
        if (client.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // Not listening yet.
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "prometheus not ready on " + url + " within " + READY_WITHIN + ":\n" + log());
  }

  private String log() throws IOException {
    return Files.readString(directory.resolve("prometheus.log"));
  }

  private static String binary() {
    String configured = System.getenv("PROMETHEUS_BIN");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
        .map(dir -> Path.of(dir, "prometheus"))
        .filter(Files::isExecutable)
        .findFirst()
        .map(Path::toString)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no prometheus binary: bin/dripline-test installs Debian's prometheus package"
                        + " (apt-get install prometheus) and sets PROMETHEUS_BIN"));
  }

  /** A port on 127.0.0.1, drawn at random below the kernel's ephemeral range, free now. */
  static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(20_000, 32_000);
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return socket.getLocalPort();
      } catch (IOException e) {
        // taken: try another
      }
    }
    throw new IllegalStateException("no free port on 127.0.0.1 after 200 tries");
  }

  @Override
  public void close() throws IOException, InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    try (Stream<Path> files = Files.walk(directory)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }
}
