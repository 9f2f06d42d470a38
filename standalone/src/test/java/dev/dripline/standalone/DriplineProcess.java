package dev.dripline.standalone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A child process of a fault-injection test: a Dripline app or worker JVM started from the test
 * classpath, or any other command (the Temporal dev server). It can be killed with SIGKILL and
 * started again with the same command and environment. Every process still alive when the test JVM
 * exits is killed by a shutdown hook, so a failed or interrupted test leaves no orphans.
 */
final class DriplineProcess implements AutoCloseable {
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> LIVE.forEach(Process::destroyForcibly), "kill-fault-children"));
  }

  private final String name;
  private final List<String> command;
  private final Map<String, String> env;
  private final Path log;
  private Process process;
  private int starts;

  private DriplineProcess(String name, List<String> command, Map<String, String> env)
      throws IOException {
    this.name = name;
    this.command = List.copyOf(command);
    this.env = Map.copyOf(env);
    this.log = Files.createTempFile("dripline-" + name + "-", ".log");
  }

  /** A Dripline JVM running {@code mainClass} with Dripline's environment variables {@code env}. */
  static DriplineProcess java(String name, String mainClass, Map<String, String> env)
      throws IOException {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            mainClass);
    return new DriplineProcess(name, command, env);
  }

  /**
   * A standalone JVM ({@code StandaloneApplication}: the API on {@code port} of 127.0.0.1 and a
   * worker) running on {@code classpath}: this tree's (the test classpath) or an earlier release's.
   */
  static DriplineProcess standalone(
      String name, String classpath, int port, Map<String, String> env) throws IOException {
    Map<String, String> all = new HashMap<>(env);
    all.put("DRIPLINE_HTTP_PORT", Integer.toString(port));
    all.put("DRIPLINE_HTTP_HOST", "127.0.0.1");
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx384m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath,
            "dev.dripline.standalone.StandaloneApplication");
    return new DriplineProcess(name, command, all);
  }

  /** A worker-only JVM ({@code WorkerApplication}); no HTTP port, no reconciler. */
  static DriplineProcess worker(String name, Map<String, String> env) throws IOException {
    Map<String, String> all = new HashMap<>();
    all.put("DRIPLINE_WORKER_HTTP_PORT", "-1");
    all.put("DRIPLINE_WORKER_RECONCILE", "false");
    all.putAll(env);
    return java(name, "dev.dripline.worker.WorkerApplication", all);
  }

  /** An app-only JVM ({@code AppApplication}) on {@code port}. */
  static DriplineProcess app(String name, int port, Map<String, String> env) throws IOException {
    Map<String, String> all = new HashMap<>(env);
    all.put("DRIPLINE_HTTP_PORT", Integer.toString(port));
    all.put("DRIPLINE_HTTP_HOST", "127.0.0.1");
    return java(name, "dev.dripline.app.AppApplication", all);
  }

  /** Any command, e.g. the Temporal dev server. */
  static DriplineProcess command(String name, List<String> command) throws IOException {
    return new DriplineProcess(name, command, Map.of());
  }

  static URI local(int port) {
    return URI.create("http://127.0.0.1:" + port);
  }

  /** Starts the process (again), appending to its log. */
  synchronized DriplineProcess start() {
    if (alive()) {
      throw new IllegalStateException(name + " is running already");
    }
    ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(command));
    builder.environment().putAll(env);
    builder
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    try {
      Files.writeString(
          log,
          "=== start " + ++starts + " of " + name + "\n",
          java.nio.file.StandardOpenOption.APPEND);
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    LIVE.add(process);
    System.out.println(name + " started (pid " + process.pid() + "), log " + log);
    return this;
  }

  /**
   * SIGTERM, and waits up to {@code within} for the process to exit, as a deploy stops a pod: a
   * worker stops polling and lets its in-flight tasks finish first.
   *
   * @return whether it exited within the bound
   */
  synchronized boolean stop(Duration within) {
    if (process == null) {
      return true;
    }
    process.destroy();
    try {
      if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
        return false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    LIVE.remove(process);
    System.out.println(name + " stopped (pid " + process.pid() + ")");
    return true;
  }

  /** SIGKILL, and waits until the process is gone. */
  synchronized void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException(name + " did not die within 30 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    LIVE.remove(process);
    System.out.println(name + " killed (pid " + process.pid() + ")");
  }

  /** The running process's pid; -1 before the first start. */
  synchronized long pid() {
    return process == null ? -1 : process.pid();
  }

  synchronized boolean alive() {
    return process != null && process.isAlive();
  }

  /** The exit code of the process, which has ended. */
  synchronized int exitValue() {
    return process.exitValue();
  }

  String name() {
    return name;
  }

  Path log() {
    return log;
  }

  /** The last lines of the log, for a failure message. */
  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  @Override
  public void close() {
    kill();
  }
}
