package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * W6 — what a backfill costs the database it shares with live traffic, and what throttling saves
 * (PRODUCT.md P6). pgbench's TPC-B on the bench's database is the foreground; {@code
 * bench.pgbench-accounts} ({@link PgbenchAccountsBackfill}) rewrites the table those transactions
 * update. Phases, each {@code --w6-seconds} of pgbench:
 *
 * <ol>
 *   <li>{@code alone}: pgbench only;
 *   <li>{@code unthrottled}: beside a run of the backfill, no health check;
 *   <li>{@code active}: beside a run held by an {@code active-queries} check;
 *   <li>{@code replica}: beside a run held by a {@code replica-lag} check on a real streaming
 *       replica ({@code bin/dripline-replica}); a third of the way in, the replica's {@code
 *       recovery_min_apply_delay} rises so replay lags, and two thirds in it is cleared: the phase
 *       also reports how long after the lag crossed the threshold the check held, and after it fell
 *       below {@code resumeBelow} it released.
 * </ol>
 *
 * <p>Per phase: foreground TPS and latency percentiles (from pgbench's per-transaction log), the
 * backfill's keys per second over the same window, and the share of samples in which the run was
 * held. Options: {@code --w6-seconds} (60), {@code --w6-clients} (8), {@code --w6-scale} (20),
 * {@code --w6-rate} (0: pgbench as fast as it can; else {@code -R} transactions per second), {@code
 * --w6-cap} (4), {@code --w6-batch-size} (1000), {@code --w6-active-threshold} (6) and {@code
 * --w6-active-resume} (3), {@code --w6-lag-threshold} (2 s) and {@code --w6-lag-delay} (10 s),
 * {@code --w6-interval} (1 s, both checks), {@code --w6-replica-port} (5433), {@code --w6-phases}
 * (alone,unthrottled,active,replica).
 */
final class W6Workload {
  private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial");

  private final BenchConfig config;
  private final Services services;
  private final int seconds;
  private final int clients;
  private final int scale;
  private final int rate;
  private final int cap;
  private final int batchSize;
  private final int interval;
  private final Path work;

  W6Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
    this.seconds = config.intOption("w6-seconds", 60);
    this.clients = config.intOption("w6-clients", 8);
    this.scale = config.intOption("w6-scale", 20);
    this.rate = config.intOption("w6-rate", 0);
    this.cap = config.intOption("w6-cap", 4);
    this.batchSize = config.intOption("w6-batch-size", 1000);
    this.interval = config.intOption("w6-interval", 1);
    this.work = config.logDir().resolve("w6");
  }

  /** One phase's figures. */
  record Phase(
      String name,
      double tps,
      double p50Millis,
      double p99Millis,
      long transactions,
      double keysPerSecond,
      double heldShare,
      String note) {}

  String run() throws Exception {
    Files.createDirectories(work);
    System.out.println();
    System.out.println(
        f(
            "== W6 backfill beside pgbench TPC-B: scale %d, %d clients%s, %d s per phase; backfill"
                + " cap %d, batch size %d; checks every %d s",
            scale,
            clients,
            rate > 0 ? ", rate " + rate + " tps" : "",
            seconds,
            cap,
            batchSize,
            interval));
    // Dripline migrates an empty database only: its schema first, then pgbench's tables beside it.
    services.ensureDripline();
    preparePgbench();
    List<Phase> phases = new ArrayList<>();
    for (String phase : config.option("w6-phases", "alone,unthrottled,active,replica").split(",")) {
      phases.add(
          switch (phase.trim()) {
            case "alone" -> alone();
            case "unthrottled" -> beside("unthrottled", Map.of());
            case "active" -> beside("active", checks(activeCheck()));
            case "replica" -> replica();
            default -> throw new IllegalArgumentException("unknown W6 phase " + phase);
          });
    }
    services.stopDripline();
    System.out.println();
    System.out.println(
        "phase        tps      p50_ms   p99_ms   transactions  backfill_keys/s  held  note");
    for (Phase p : phases) {
      System.out.println(
          f(
              "%-11s %8.1f %8.2f %8.2f %14d %16.1f %5.0f%%  %s",
              p.name(),
              p.tps(),
              p.p50Millis(),
              p.p99Millis(),
              p.transactions(),
              p.keysPerSecond(),
              p.heldShare() * 100,
              p.note()));
    }
    return verdict(phases);
  }

  private String verdict(List<Phase> phases) {
    Map<String, Phase> byName = new LinkedHashMap<>();
    phases.forEach(p -> byName.put(p.name(), p));
    Phase alone = byName.get("alone");
    Phase unthrottled = byName.get("unthrottled");
    List<String> parts = new ArrayList<>();
    for (String throttled : List.of("active", "replica")) {
      Phase p = byName.get(throttled);
      if (p == null || alone == null || unthrottled == null) {
        continue;
      }
      parts.add(
          f(
              "%s: p99 %.2fx alone (target <= 1.25), backfill %.0f%% of unthrottled (target >="
                  + " 50%%)",
              throttled,
              p.p99Millis() / alone.p99Millis(),
              100 * p.keysPerSecond() / unthrottled.keysPerSecond()));
    }
    if (unthrottled != null && alone != null) {
      parts.add(0, f("unthrottled: p99 %.2fx alone", unthrottled.p99Millis() / alone.p99Millis()));
    }
    return String.join("; ", parts);
  }

  // ---------------------------------------------------------------------------------------------
  // Phases

  private Phase alone() throws Exception {
    System.out.println("-- alone: pgbench only");
    Pgbench result = pgbench("alone");
    return new Phase(
        "alone", result.tps(), result.p50(), result.p99(), result.transactions(), 0, 0, "");
  }

  /** pgbench beside a run of the backfill, on a Dripline JVM with {@code env} added. */
  private Phase beside(String name, Map<String, String> env) throws Exception {
    System.out.println("-- " + name + ": pgbench beside a run of " + PgbenchAccountsBackfill.NAME);
    services.stopDripline();
    services.ensureDripline(env);
    BackfillLoad load = new BackfillLoad();
    load.start();
    long start = System.nanoTime();
    Pgbench result = pgbench(name);
    double elapsed = (System.nanoTime() - start) / 1e9;
    long keys = load.stop();
    return new Phase(
        name,
        result.tps(),
        result.p50(),
        result.p99(),
        result.transactions(),
        keys / elapsed,
        load.heldShare(),
        load.runs());
  }

  private Phase replica() throws Exception {
    int port = config.intOption("w6-replica-port", 5433);
    int lagThreshold = config.intOption("w6-lag-threshold", 2);
    int delay = config.intOption("w6-lag-delay", 10);
    script("up");
    script("delay", "0");
    String replicaUrl =
        config.dbUrl().replaceFirst("//([^/:]+)(:\\d+)?/", "//127.0.0.1:" + port + "/");
    String check =
        f(
            "      lag:\n"
                + "        kind: replica-lag\n"
                + "        url: \"%s\"\n"
                + "        user: %s\n"
                + "        password: %s\n"
                + "        threshold: %d\n"
                + "        interval: %ds\n",
            replicaUrl, config.dbUser(), config.dbPassword(), lagThreshold, interval);
    System.out.println(
        "-- replica: pgbench beside a run held on replay lag > " + lagThreshold + " s");
    services.stopDripline();
    services.ensureDripline(checks(check));
    BackfillLoad load = new BackfillLoad();
    LagWatch lag = new LagWatch(replicaUrl, lagThreshold, lagThreshold * 0.8);
    load.start();
    lag.start();
    long start = System.nanoTime();
    Thread delays =
        new Thread(
            () -> {
              try {
                Thread.sleep(seconds * 1000L / 3);
                script("delay", delay + "s");
                Thread.sleep(seconds * 1000L / 3);
                script("delay", "0");
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            "w6-delays");
    delays.start();
    Pgbench result = pgbench("replica");
    delays.join();
    double elapsed = (System.nanoTime() - start) / 1e9;
    long keys = load.stop();
    lag.stop();
    script("down");
    return new Phase(
        "replica",
        result.tps(),
        result.p50(),
        result.p99(),
        result.transactions(),
        keys / elapsed,
        load.heldShare(),
        f(
            "%s; lag over %d s at %s, held %s later; below %.1f s at %s, released %s later",
            load.runs(),
            lagThreshold,
            lag.overAt == 0 ? "never" : f("%.1f s", lag.overAt / 1e3),
            lag.holdAt == 0 || lag.overAt == 0 ? "never" : (lag.holdAt - lag.overAt) + " ms",
            lagThreshold * 0.8,
            lag.clearAt == 0 ? "never" : f("%.1f s", lag.clearAt / 1e3),
            lag.releaseAt == 0 || lag.clearAt == 0
                ? "never"
                : (lag.releaseAt - lag.clearAt) + " ms"));
  }

  private String activeCheck() {
    return f(
        "      load:\n"
            + "        kind: active-queries\n"
            + "        threshold: %d\n"
            + "        resume-below: %d\n"
            + "        interval: %ds\n",
        config.intOption("w6-active-threshold", 6),
        config.intOption("w6-active-resume", 3),
        interval);
  }

  /** A configuration file declaring {@code checkYaml}; the env naming it. */
  private Map<String, String> checks(String checkYaml) throws IOException {
    Path file = work.resolve("checks.yml").toAbsolutePath();
    Files.writeString(file, "dripline:\n  throttle:\n    checks:\n" + checkYaml);
    return Map.of("MICRONAUT_CONFIG_FILES", file.toString());
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  private long startRun() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", PgbenchAccountsBackfill.NAME);
    body.put("batchSize", batchSize);
    body.put("maxParallelBatches", cap);
    Services.Response response = services.post("/api/runs", body);
    if (response.status() != 201) {
      throw new IllegalStateException(
          "POST /api/runs answered " + response.status() + ": " + response.body());
    }
    long run = response.body().get("id").asLong();
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (services.queryLong(
            "select count(*) from batches where run_id = ? and started_at is not null", run)
        == 0) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("run " + run + " started no batch within 2 min");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return run;
  }

  private void stopRun(long run) {
    Services.Response stop = services.post("/api/runs/" + run + "/stop", Map.of());
    if (stop.status() != 202 && stop.status() != 409) {
      throw new IllegalStateException("stop of run " + run + " answered " + stop.status());
    }
    BenchMain.awaitTerminal(services, run, Duration.ofMinutes(2), 100);
  }

  /**
   * The backfill beside pgbench for one phase: a run, and another as soon as one completes (the
   * table is small next to the backfill's speed), until stopped; every 200 ms it also samples
   * whether a hold keeps the backfill's runs from starting batches.
   */
  private final class BackfillLoad {
    private final AtomicBoolean done = new AtomicBoolean();
    private final Thread thread = new Thread(this::keepGoing, "w6-backfill");
    private final List<Long> runs = new ArrayList<>();
    private volatile RuntimeException failure;
    private long samples;
    private long held;

    void start() throws InterruptedException {
      runs.add(startRun());
      thread.start();
    }

    private void keepGoing() {
      try {
        while (!done.get()) {
          samples++;
          if (services.queryLong(
                  "select cardinality(dripline_run_holds(?))", PgbenchAccountsBackfill.NAME)
              > 0) {
            held++;
          }
          long current = runs.get(runs.size() - 1);
          if ("completed"
              .equals(services.queryString("select status from runs where id = ?", current))) {
            runs.add(startRun());
          }
          Thread.sleep(200);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        failure = e;
      }
    }

    /** Stops the current run; the keys all of this phase's runs processed. */
    long stop() throws InterruptedException {
      done.set(true);
      thread.join();
      if (failure != null) {
        throw failure;
      }
      stopRun(runs.get(runs.size() - 1));
      long keys = 0;
      for (long run : runs) {
        keys +=
            services.queryLong(
                "select coalesce(sum(processed_keys), 0) from run_key_counts where run_id = ?",
                run);
      }
      return keys;
    }

    double heldShare() {
      return samples == 0 ? 0 : (double) held / samples;
    }

    String runs() {
      return "runs " + runs.stream().map(String::valueOf).reduce((x, y) -> x + "," + y).orElse("");
    }
  }

  /**
   * Samples the replica's replay lag and the check's holding every 100 ms: when the lag first rose
   * over the threshold and the check first held after it, when it first fell below {@code
   * resumeBelow} after that and the check first released after it (milliseconds since the watch
   * started; 0 if it never happened).
   */
  private final class LagWatch {
    private final String replicaUrl;
    private final double threshold;
    private final double resumeBelow;
    private final AtomicBoolean done = new AtomicBoolean();
    private final Thread thread;
    private volatile long overAt;
    private volatile long holdAt;
    private volatile long clearAt;
    private volatile long releaseAt;

    LagWatch(String replicaUrl, double threshold, double resumeBelow) {
      this.replicaUrl = replicaUrl;
      this.threshold = threshold;
      this.resumeBelow = resumeBelow;
      this.thread = new Thread(this::watch, "w6-lag");
    }

    void start() {
      thread.start();
    }

    private void watch() {
      long start = System.nanoTime();
      try (Connection replica =
              DriverManager.getConnection(replicaUrl, config.dbUser(), config.dbPassword());
          Statement read = replica.createStatement()) {
        while (!done.get()) {
          long now = Math.max(1, (System.nanoTime() - start) / 1_000_000);
          double lag = 0;
          try (ResultSet row =
              read.executeQuery(
                  "select extract(epoch from now() - pg_last_xact_replay_timestamp())")) {
            if (row.next()) {
              lag = row.getDouble(1);
            }
          }
          boolean holding =
              services.queryLong(
                      "select count(*) from throttle_checks where name = 'lag' and holding")
                  > 0;
          if (overAt == 0 && lag > threshold) {
            overAt = now;
          }
          if (overAt != 0 && holdAt == 0 && holding) {
            holdAt = now;
          }
          if (holdAt != 0 && clearAt == 0 && lag < resumeBelow) {
            clearAt = now;
          }
          if (clearAt != 0 && releaseAt == 0 && !holding) {
            releaseAt = now;
          }
          Thread.sleep(100);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("reading the replica's lag: " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    void stop() throws InterruptedException {
      done.set(true);
      thread.join();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // pgbench and the replica

  /** One pgbench run's figures: TPS as pgbench reports it, latency percentiles from its log. */
  record Pgbench(double tps, double p50, double p99, long transactions) {}

  /** Creates pgbench's tables at {@code --w6-scale} unless they are there at that scale. */
  private void preparePgbench() throws Exception {
    long branches = 0;
    try {
      branches = services.queryLong("select count(*) from pgbench_branches");
    } catch (IllegalStateException e) {
      // not initialised yet
    }
    if (branches == scale) {
      System.out.println("pgbench tables present at scale " + scale);
      return;
    }
    System.out.println("pgbench -i -s " + scale + " (once)");
    exec(List.of(pgbenchBinary(), "-i", "-s", Integer.toString(scale), "-q"), "init");
  }

  private Pgbench pgbench(String phase) throws Exception {
    Path logs = work.resolve(phase);
    if (Files.exists(logs)) {
      try (Stream<Path> old = Files.list(logs)) {
        for (Path file : old.toList()) {
          Files.delete(file);
        }
      }
    }
    Files.createDirectories(logs);
    List<String> command =
        new ArrayList<>(
            List.of(
                pgbenchBinary(),
                "-n",
                "-c",
                Integer.toString(clients),
                "-j",
                Integer.toString(Math.min(clients, 2)),
                "-T",
                Integer.toString(seconds),
                "-l",
                "--log-prefix=" + logs.resolve("tx")));
    if (rate > 0) {
      command.addAll(List.of("-R", Integer.toString(rate)));
    }
    String output = exec(command, phase);
    Matcher tps = TPS.matcher(output);
    double reported = tps.find() ? Double.parseDouble(tps.group(1)) : Double.NaN;
    List<Long> latencies = new ArrayList<>();
    try (Stream<Path> files = Files.list(logs)) {
      for (Path file : files.toList()) {
        for (String line : Files.readAllLines(file)) {
          String[] fields = line.trim().split("\\s+");
          if (fields.length >= 3 && !fields[2].equals("skipped")) {
            latencies.add(Long.parseLong(fields[2]));
          }
        }
      }
    }
    latencies.sort(Long::compare);
    return new Pgbench(
        reported, percentile(latencies, 0.50), percentile(latencies, 0.99), latencies.size());
  }

  private static double percentile(List<Long> sortedMicros, double q) {
    if (sortedMicros.isEmpty()) {
      return Double.NaN;
    }
    int index = (int) Math.min(sortedMicros.size() - 1, Math.ceil(q * sortedMicros.size()) - 1);
    return sortedMicros.get(Math.max(0, index)) / 1000.0;
  }

  private String pgbenchBinary() {
    Path debian = Path.of("/usr/lib/postgresql/15/bin/pgbench");
    return Files.isExecutable(debian) ? debian.toString() : "pgbench";
  }

  /** Runs a pgbench command against the bench's database; its output, or fails. */
  private String exec(List<String> command, String what) throws Exception {
    Matcher url = Pattern.compile("//([^/:]+)(?::(\\d+))?/([^?]+)").matcher(config.dbUrl());
    if (!url.find()) {
      throw new IllegalStateException("cannot read host and database of " + config.dbUrl());
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("PGHOST", url.group(1));
    builder.environment().put("PGPORT", url.group(2) == null ? "5432" : url.group(2));
    builder.environment().put("PGDATABASE", url.group(3));
    builder.environment().put("PGUSER", config.dbUser());
    builder.environment().put("PGPASSWORD", config.dbPassword());
    builder.redirectErrorStream(true);
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes());
    if (!process.waitFor(seconds + 600L, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IllegalStateException("pgbench (" + what + ") failed:\n" + output);
    }
    return output;
  }

  /** Runs {@code bin/dripline-replica} with {@code args}; fails if it does. */
  private static void script(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bin/dripline-replica"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    if (process.waitFor() != 0) {
      throw new IllegalStateException(
          "bin/dripline-replica " + String.join(" ", args) + ":\n" + output);
    }
  }
}
