package dev.dripline.standalone;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The dedicated PostgreSQL cluster that fault-injection tests may stop and start ({@code
 * ensure_fault_postgres} in bin/lib.sh creates it; bin/dripline-test exports {@code
 * DRIPLINE_FAULT_PG_VERSION}, {@code DRIPLINE_FAULT_PG_CLUSTER}, {@code DRIPLINE_FAULT_PG_PORT} and
 * {@code DRIPLINE_FAULT_DB_URL}). Never the shared cluster. Holding it takes a file lock, so two
 * suites on one machine (two worktrees) do not stop it under each other.
 */
final class FaultPostgres implements AutoCloseable {
  private final String version;
  private final String cluster;
  private final Sql sql;
  private final FileChannel lockFile;
  private final FileLock lock;

  private FaultPostgres(String version, String cluster, String url) throws IOException {
    this.version = version;
    this.cluster = cluster;
    this.sql = new Sql(url);
    this.lockFile =
        FileChannel.open(
            Path.of(System.getProperty("java.io.tmpdir"), "dripline-fault-postgres-" + cluster),
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE);
    this.lock = lockFile.lock();
  }

  /** The cluster named by the environment, locked for this test until {@link #close()}. */
  static FaultPostgres acquire() throws IOException {
    String url = System.getenv("DRIPLINE_FAULT_DB_URL");
    if (url == null || url.isBlank()) {
      throw new IllegalStateException(
          "env DRIPLINE_FAULT_DB_URL is not set: run the tests with bin/dripline-test, which"
              + " ensures the fault cluster (ensure_fault_postgres in bin/lib.sh)");
    }
    return new FaultPostgres(
        System.getenv().getOrDefault("DRIPLINE_FAULT_PG_VERSION", "15"),
        System.getenv().getOrDefault("DRIPLINE_FAULT_PG_CLUSTER", "dripline_faults"),
        url);
  }

  Sql sql() {
    return sql;
  }

  /** Stops the cluster (fast shutdown: open sessions are ended). */
  void stop() {
    pgCtl("stop");
  }

  /** Starts the cluster and waits until it accepts connections. */
  void start() {
    pgCtl("start");
    awaitUp(Duration.ofSeconds(60));
  }

  /** Starts the cluster if it is down (after a failed test), and waits until it answers. */
  void ensureUp() {
    if (!up()) {
      start();
    }
  }

  boolean up() {
    try (Connection c = sql.connect()) {
      return c.isValid(2);
    } catch (Exception e) {
      return false;
    }
  }

  private void awaitUp(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!up()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the fault cluster did not come back within " + timeout);
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  private void pgCtl(String action) {
    List<String> command = new ArrayList<>();
    String user = System.getProperty("user.name");
    if (!"root".equals(user) && !"postgres".equals(user)) {
      command.addAll(List.of("sudo", "-n", "-u", "postgres"));
    }
    command.addAll(List.of("pg_ctlcluster", version, cluster, action));
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      if (!process.waitFor(90, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " timed out");
      }
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " exited " + process.exitValue() + ": " + out);
      }
      System.out.println("fault cluster: " + String.join(" ", command));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws IOException {
    try {
      ensureUp();
    } finally {
      lock.release();
      lockFile.close();
    }
  }
}
