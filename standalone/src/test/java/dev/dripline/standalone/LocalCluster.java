package dev.dripline.standalone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The multi-service Temporal cluster on PostgreSQL (spec §12 D1) that {@code bin/dripline-test}
 * builds and prepares: frontend, history, matching and worker as separate processes, driven through
 * {@code bin/dripline-cluster} (env {@code DRIPLINE_CLUSTER_CTL}) for the instance that env {@code
 * DRIPLINE_CLUSTER_NAME} names, its frontend on 127.0.0.1:{@code DRIPLINE_CLUSTER_FRONTEND_PORT},
 * its pid files in {@code DRIPLINE_CLUSTER_DIR}. A kill is sent from here, by pid, so that it lands
 * at once.
 */
final class LocalCluster implements AutoCloseable {
  /** The only name in the frontend's certificate of a TLS cluster (bin/lib-cluster.sh). */
  static final String TLS_SERVER_NAME = "localhost";

  private static final long COMMAND_TIMEOUT_MINUTES = 5;

  private final String ctl;
  private final Path dir;
  private final String address;
  private final Path log;
  private final Path tlsDir;

  private LocalCluster(String ctl, Path dir, String port, Path tlsDir) throws IOException {
    this.ctl = ctl;
    this.dir = dir;
    this.address = "127.0.0.1:" + port;
    this.log = Files.createTempFile("dripline-cluster-ctl-", ".log");
    this.tlsDir = tlsDir;
  }

  /**
   * Why the cluster cannot be used here, or empty when it can: bin/dripline-test built the server
   * and set the environment (it does not when Go is missing or too old, or with {@code
   * DRIPLINE_CLUSTER=0}).
   */
  static Optional<String> unavailable() {
    String ctl = System.getenv("DRIPLINE_CLUSTER_CTL");
    String server = System.getenv("DRIPLINE_CLUSTER_SERVER");
    String dir = System.getenv("DRIPLINE_CLUSTER_DIR");
    if (ctl == null || ctl.isBlank() || server == null || server.isBlank() || dir == null) {
      return Optional.of(
          "no Temporal cluster: env DRIPLINE_CLUSTER_CTL, DRIPLINE_CLUSTER_SERVER and"
              + " DRIPLINE_CLUSTER_DIR are not set"
              + " (bin/dripline-test sets them once it has built and prepared the cluster; it"
              + " does not with DRIPLINE_CLUSTER=0, or without a Go new enough to build"
              + " go.temporal.io/server, see its log)");
    }
    if (!Files.isExecutable(Path.of(server))) {
      return Optional.of("no Temporal cluster: the server binary " + server + " is absent");
    }
    return Optional.empty();
  }

  /**
   * The cluster bin/dripline-test prepared, its frontend plain; call only when {@link
   * #unavailable()} is empty.
   */
  static LocalCluster fromEnvironment() throws IOException {
    return new LocalCluster(
        System.getenv("DRIPLINE_CLUSTER_CTL"),
        Path.of(System.getenv("DRIPLINE_CLUSTER_DIR")),
        System.getenv("DRIPLINE_CLUSTER_FRONTEND_PORT"),
        null);
  }

  /**
   * The same cluster with its frontend serving mTLS (spec §12 D2): {@code bin/dripline-cluster}
   * makes a CA, the frontend's certificate (name {@link #TLS_SERVER_NAME} only) and a client
   * certificate in {@code tlsDir} when they are missing there. Call {@link #close()} on a plain
   * instance that runs before {@link #start()}: the setting changes only on a stopped cluster.
   */
  static LocalCluster withTls(Path tlsDir) throws IOException {
    return new LocalCluster(
        System.getenv("DRIPLINE_CLUSTER_CTL"),
        Path.of(System.getenv("DRIPLINE_CLUSTER_DIR")),
        System.getenv("DRIPLINE_CLUSTER_FRONTEND_PORT"),
        tlsDir);
  }

  /**
   * What a client of this cluster needs: {@code TEMPORAL_ADDRESS} and, with TLS, the client
   * certificate and key, the CA and the server's name (the Temporal CLI's variables, which Dripline
   * reads too).
   */
  Map<String, String> clientEnv() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("TEMPORAL_ADDRESS", address);
    if (tlsDir != null) {
      env.put("TEMPORAL_TLS_CLIENT_CERT_PATH", tlsDir.resolve("client.pem").toString());
      env.put("TEMPORAL_TLS_CLIENT_KEY_PATH", tlsDir.resolve("client.key").toString());
      env.put("TEMPORAL_TLS_SERVER_CA_CERT_PATH", tlsDir.resolve("ca.pem").toString());
      env.put("TEMPORAL_TLS_SERVER_NAME", TLS_SERVER_NAME);
    }
    return env;
  }

  /** The frontend, what Dripline's processes dial. */
  String address() {
    return address;
  }

  /**
   * Starts every service that is not running, waits until the cluster is healthy and a workflow
   * with Dripline's search attributes can start in namespace default.
   */
  void start() {
    run("start");
  }

  /** SIGKILL to one service (history, matching, frontend or worker); returns once it is gone. */
  void kill(String service) throws Exception {
    Path pidFile = dir.resolve(service + ".pid");
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    ProcessHandle process =
        ProcessHandle.of(pid)
            .orElseThrow(
                () -> new IllegalStateException(service + " (pid " + pid + ") is not running"));
    process.destroyForcibly();
    process.onExit().get(30, TimeUnit.SECONDS);
    Files.delete(pidFile);
    System.out.println("cluster " + service + " killed (pid " + pid + ")");
  }

  /**
   * Starts one service again and waits until the cluster is healthy.
   *
   * @return seconds from the start until the frontend reported SERVING with every service running
   */
  double startService(String service) {
    long start = System.nanoTime();
    run("start-service", service);
    return (System.nanoTime() - start) / 1e9;
  }

  /** Stops every service. */
  @Override
  public void close() {
    run("stop");
  }

  private void run(String... args) {
    List<String> command = new ArrayList<>(List.of("bash", ctl));
    command.addAll(List.of(args));
    try {
      Files.writeString(
          log, "=== " + String.join(" ", args) + "\n", java.nio.file.StandardOpenOption.APPEND);
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      // The instance keeps the TLS setting it was last configured with; say it every time.
      builder
          .environment()
          .put("DRIPLINE_CLUSTER_TLS_DIR", tlsDir == null ? "" : tlsDir.toString());
      Process process = builder.start();
      if (!process.waitFor(COMMAND_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "bin/dripline-cluster " + String.join(" ", args) + " did not return:\n" + tail());
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            "bin/dripline-cluster " + String.join(" ", args) + " failed:\n" + tail());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private String tail() {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - 60), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }
}
