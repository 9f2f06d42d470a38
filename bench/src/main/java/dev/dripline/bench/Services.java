package dev.dripline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The processes a benchmark run needs (a Dripline JVM, a baseline worker JVM), and small HTTP and
 * SQL helpers. Every process started here is destroyed when the bench JVM exits.
 */
final class Services implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  private static final String CONFIG_FILES = "MICRONAUT_CONFIG_FILES";

  /**
   * The operator token the bench gives the Dripline JVMs it starts and sends with every API
   * request: {@code DRIPLINE_OPERATOR_TOKEN} if set, else the development default.
   */
  static final String OPERATOR_TOKEN =
      System.getenv().getOrDefault("DRIPLINE_OPERATOR_TOKEN", "dev-operator");

  /** The {@code Authorization} header value of every API request of the bench. */
  static final String AUTHORIZATION = "Bearer " + OPERATOR_TOKEN;

  private final BenchConfig config;
  private final List<Process> processes = new ArrayList<>();
  private Process dripline;
  private Process bareWorker;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private Connection db;

  Services(BenchConfig config) {
    this.config = config;
    Runtime.getRuntime().addShutdownHook(new Thread(this::destroyAll, "bench-cleanup"));
  }

  // ------------------------------------------------------------------------------------------
  // Processes

  /** Starts a process whose output goes to {@code bench-<name>.log}; stopped on close. */
  Process spawn(String name, List<String> command, Map<String, String> env) throws IOException {
    Path log = config.logDir().resolve("bench-" + name + ".log");
    Files.createDirectories(config.logDir());
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    builder
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    Process process = builder.start();
    synchronized (processes) {
      processes.add(process);
    }
    System.out.printf("started %s (pid %d), log %s%n", name, process.pid(), log);
    return process;
  }

  /** A {@code java} command line with the worker heap and the bench's own classpath. */
  List<String> java(String mainClass, String... args) {
    return java(List.of(config.workerHeap()), mainClass, args);
  }

  /** A {@code java} command line with the given JVM options and the bench's own classpath. */
  List<String> java(List<String> jvmOptions, String mainClass, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(List.of(args));
    return command;
  }

  /**
   * The environment of a Dripline JVM of the bench: its Temporal server, task queue, database,
   * worker slots and pool, API operator token, logs at WARN unless {@code DRIPLINE_BENCH_LOG_LEVEL}
   * says otherwise. Callers may copy it and change entries.
   */
  Map<String, String> driplineEnv() {
    String logLevel = System.getenv().getOrDefault("DRIPLINE_BENCH_LOG_LEVEL", "WARN");
    return Map.of(
        "DRIPLINE_HTTP_PORT", Integer.toString(config.httpPort()),
        "DRIPLINE_OPERATOR_TOKEN", OPERATOR_TOKEN,
        "TEMPORAL_ADDRESS", config.temporalAddress(),
        "DRIPLINE_TASK_QUEUE", config.driplineTaskQueue(),
        "DRIPLINE_DB_URL", config.dbUrl(),
        "DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES", Integer.toString(config.workerSlots()),
        "DRIPLINE_DB_POOL_SIZE", Integer.toString(config.dbPoolSize()),
        "DRIPLINE_LOG_LEVEL", logLevel);
  }

  /**
   * Starts app + worker in one JVM (StandaloneApplication) with {@link #driplineEnv()} unless it is
   * running already, and waits until its /health says 200.
   */
  void ensureDripline() throws IOException, InterruptedException {
    ensureDripline(Map.of());
  }

  /**
   * {@link #ensureDripline()} with {@code extraEnv} added to {@link #driplineEnv()} (e.g. {@code
   * MICRONAUT_CONFIG_FILES} for health checks); a JVM already running keeps its environment.
   */
  void ensureDripline(Map<String, String> extraEnv) throws IOException, InterruptedException {
    if (dripline != null && dripline.isAlive()) {
      return;
    }
    List<String> options = new ArrayList<>(List.of(config.workerHeap()));
    String extra = System.getenv("DRIPLINE_BENCH_DRIPLINE_JVM_OPTS");
    if (extra != null && !extra.isBlank()) {
      options.addAll(List.of(extra.trim().split("\\s+")));
    }
    Map<String, String> env = withExtra(driplineEnv(), extraEnv);
    if (config.driplineCheck().equals("clear") && !extraEnv.containsKey(CONFIG_FILES)) {
      env.put(CONFIG_FILES, clearCheckFile().toString());
    }
    dripline =
        spawn("dripline", java(options, "dev.dripline.standalone.StandaloneApplication"), env);
    awaitHealthy(dripline, "Dripline", baseUrl() + "/health", Duration.ofMinutes(3));
  }

  /**
   * A configuration file declaring one health check that never holds ({@code --dripline-check
   * clear}): a {@code sql} check reading 0 every second against a threshold of 1, for every
   * backfill.
   */
  private Path clearCheckFile() throws IOException {
    Path file = config.logDir().resolve("clear-check.yml").toAbsolutePath();
    Files.createDirectories(file.getParent());
    Files.writeString(
        file,
        """
        dripline:
          throttle:
            checks:
              clear:
                kind: sql
                query: select 0
                threshold: 1
                interval: 1s
        """);
    return file;
  }

  private static Map<String, String> withExtra(Map<String, String> env, Map<String, String> extra) {
    Map<String, String> all = new java.util.HashMap<>(env);
    all.putAll(extra);
    return all;
  }

  /** Stops the JVM {@link #ensureDripline()} started, if any (for workloads with their own). */
  void stopDripline() throws InterruptedException {
    if (dripline != null) {
      stop(dripline);
      dripline = null;
    }
  }

  /** Stops one process this class started: SIGTERM, then SIGKILL after 20 s. */
  void stop(Process process) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
    synchronized (processes) {
      processes.remove(process);
    }
  }

  /** Waits until {@code url} answers 200; fails early if {@code process} exits. */
  void awaitHealthy(Process process, String what, String url, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the " + what + " JVM exited during start-up; see its log");
      }
      try {
        HttpResponse<String> health =
            http.send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (health.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(what + " did not become healthy within " + timeout);
  }

  /** The pid of the JVM {@link #ensureDripline()} started, or -1. */
  long driplinePid() {
    return dripline == null ? -1 : dripline.pid();
  }

  /** The pid of the baseline's worker JVM, or -1. */
  long bareWorkerPid() {
    return bareWorker == null ? -1 : bareWorker.pid();
  }

  /** Pids of the PostgreSQL backends connected to the bench's database (its own included). */
  List<Long> backendPids() {
    List<Long> pids = new ArrayList<>();
    try (PreparedStatement s =
            db().prepareStatement(
                    "select pid from pg_stat_activity where datname = current_database()");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        pids.add(rs.getLong(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return pids;
  }

  /** The pid of the Temporal dev server listening on the bench's gRPC port, if found. */
  List<Long> temporalPids() {
    String port = config.temporalAddress().substring(config.temporalAddress().lastIndexOf(':') + 1);
    return CpuMeter.pidsWithCommandLine("start-dev", "--port " + port + " ");
  }

  /** Starts the baseline's worker JVM and waits for its READY line in the log. */
  void startBareWorker() throws IOException, InterruptedException {
    if (bareWorker != null && bareWorker.isAlive()) {
      return;
    }
    Process process =
        spawn(
            "bare-worker",
            java(
                BareWorkerMain.class.getName(),
                config.temporalAddress(),
                config.bareTaskQueue(),
                Integer.toString(config.workerSlots()),
                Integer.toString(config.workflowTaskSlots())),
            Map.of());
    bareWorker = process;
    Path log = config.logDir().resolve("bench-bare-worker.log");
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the baseline worker JVM exited; see " + log);
      }
      if (Files.readString(log).contains("READY")) {
        return;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the baseline worker did not start within 120 s");
  }

  private void destroyAll() {
    synchronized (processes) {
      for (Process p : processes) {
        p.destroy();
      }
      for (Process p : processes) {
        try {
          if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        } catch (InterruptedException e) {
          p.destroyForcibly();
          Thread.currentThread().interrupt();
        }
      }
      processes.clear();
    }
  }

  @Override
  public void close() {
    destroyAll();
    if (db != null) {
      try {
        db.close();
      } catch (SQLException e) {
        // ignore
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // HTTP

  String baseUrl() {
    return "http://127.0.0.1:" + config.httpPort();
  }

  record Response(int status, JsonNode body) {}

  Response post(String path, Object body) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(baseUrl() + path))
                  .timeout(Duration.ofSeconds(30))
                  .header("Authorization", AUTHORIZATION)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      String text = response.body();
      return new Response(
          response.statusCode(),
          text == null || text.isBlank() ? JSON.nullNode() : JSON.readTree(text));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // SQL (the bench's own connection, to read what Dripline recorded)

  private Connection db() throws SQLException {
    if (db == null || db.isClosed()) {
      db = DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
    }
    return db;
  }

  String queryString(String sql, Object... args) {
    Object value = queryObject(sql, args);
    return value == null ? null : value.toString();
  }

  long queryLong(String sql, Object... args) {
    Object value = queryObject(sql, args);
    return value == null ? 0 : ((Number) value).longValue();
  }

  Instant queryInstant(String sql, Object... args) {
    Object value = queryObject(sql, args);
    return value == null ? null : ((Timestamp) value).toInstant();
  }

  long[] queryLongs(String sql, Object... args) {
    try (PreparedStatement s = db().prepareStatement(sql)) {
      bind(s, args);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return new long[0];
        }
        long[] values = new long[rs.getMetaData().getColumnCount()];
        for (int i = 0; i < values.length; i++) {
          values[i] = rs.getLong(i + 1);
        }
        return values;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of every row, as longs. */
  List<Long> queryLongColumn(String sql, Object... args) {
    List<Long> values = new ArrayList<>();
    try (PreparedStatement s = db().prepareStatement(sql)) {
      bind(s, args);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          values.add(rs.getLong(1));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return values;
  }

  /** Rows of (text, number) as a map, in the order the statement returns them. */
  Map<String, Long> queryLongMap(String sql, Object... args) {
    Map<String, Long> values = new java.util.LinkedHashMap<>();
    try (PreparedStatement s = db().prepareStatement(sql)) {
      bind(s, args);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          values.put(rs.getString(1), rs.getLong(2));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return values;
  }

  private Object queryObject(String sql, Object... args) {
    try (PreparedStatement s = db().prepareStatement(sql)) {
      bind(s, args);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getObject(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void bind(PreparedStatement s, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      Object arg = args[i];
      if (arg instanceof Instant instant) {
        s.setTimestamp(i + 1, Timestamp.from(instant));
      } else {
        s.setObject(i + 1, arg);
      }
    }
  }
}
