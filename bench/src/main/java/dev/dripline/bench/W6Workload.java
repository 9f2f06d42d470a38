package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;
import static java.nio.charset.StandardCharsets.UTF_8;

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
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;
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
 * <p>Each phase starts from vacuumed pgbench tables and an empty history; a phase with a backfill
 * starts a fresh Dripline JVM (its checks are configuration) and lets the backfill run {@code
 * --w6-warmup} seconds before pgbench starts. Per phase: foreground TPS and latency percentiles
 * (from pgbench's per-transaction log), the backfill's keys per second over pgbench's run only, the
 * share of samples in which the run was held, pgbench's p99 over the transactions that ended while
 * it was held and while it was not, and the CPU the Dripline JVM, the dev server and the whole
 * machine used. Options: {@code --w6-seconds} (60), {@code --w6-clients} (8), {@code --w6-scale}
 * (20), {@code --w6-rate} (0: pgbench as fast as it can; else {@code -R} transactions per second),
 * {@code --w6-cap} (4), {@code --w6-batch-size} (1000), {@code --w6-active-threshold} (6) and
 * {@code --w6-active-resume} (3), {@code --w6-nice-ratio} (0: the throttled phases' runs do not
 * rest between batches; else their {@code niceRatio}), {@code --w6-lag-threshold} (2 s) and {@code
 * --w6-lag-delay} (10 s), {@code --w6-interval} (1 s, both checks), {@code --w6-warmup} (10 s),
 * {@code --w6-replica-port} (5433), {@code --w6-phases} (alone,unthrottled,active,replica,alone:
 * pgbench alone before and after, as the machine drifts).
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
  private final int warmup;
  private final Path work;
  private final CpuMeter cpu;
  private final WalMeter wal;

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
    this.warmup = config.intOption("w6-warmup", 10);
    this.work = config.logDir().resolve("w6");
    this.cpu =
        new CpuMeter()
            .part("dripline", () -> List.of(services.driplinePid()))
            .part("temporal", services::temporalPids)
            .machine("busy", CpuMeter.BUSY)
            .machine("idle", CpuMeter.IDLE);
    this.wal = new WalMeter(services);
  }

  /**
   * One phase's figures: pgbench's, the backfill's keys per second over pgbench's window, the share
   * of samples in which the run was held, and pgbench's p99 over the transactions that ended while
   * the run was held and while it was not (NaN when there were none).
   */
  record Phase(
      String name,
      Pgbench pgbench,
      double keysPerSecond,
      double heldShare,
      double p99Held,
      double p99Free,
      String note) {
    double tps() {
      return pgbench.tps();
    }

    double p99Millis() {
      return pgbench.p99();
    }
  }

  String run() throws Exception {
    Files.createDirectories(work);
    System.out.println();
    System.out.println(
        f(
            "== W6 backfill beside pgbench TPC-B: scale %d, %d clients%s, %d s per phase; backfill"
                + " cap %d, batch size %d, %d s warm-up; checks every %d s",
            scale,
            clients,
            rate > 0 ? ", rate " + rate + " tps" : "",
            seconds,
            cap,
            batchSize,
            warmup,
            interval));
    // Dripline migrates an empty database only: its schema first, then pgbench's tables beside it.
    services.ensureDripline();
    System.out.println("postgresql: " + wal.settings());
    preparePgbench();
    List<Phase> phases = new ArrayList<>();
    for (String phase :
        config.option("w6-phases", "alone,unthrottled,active,replica,alone").split(",")) {
      phases.add(
          switch (phase.trim()) {
            case "alone" -> alone();
            case "unthrottled" -> beside("unthrottled", Map.of(), Map.of());
            case "active" -> beside("active", checks(activeCheck()), paced());
            case "replica" -> replica();
            default -> throw new IllegalArgumentException("unknown W6 phase " + phase);
          });
    }
    services.stopDripline();
    System.out.println();
    System.out.println(
        "phase          tps   p50_ms   p99_ms  transactions  backfill_keys/s  held  p99_held"
            + "  p99_free  note");
    for (Phase p : phases) {
      System.out.println(
          f(
              "%-11s %7.1f %8.2f %8.2f %13d %16.1f %4.0f%% %9.2f %9.2f  %s",
              p.name(),
              p.tps(),
              p.pgbench().p50(),
              p.p99Millis(),
              p.pgbench().transactions(),
              p.keysPerSecond(),
              p.heldShare() * 100,
              p.p99Held(),
              p.p99Free(),
              p.note()));
    }
    return verdict(phases);
  }

  /**
   * The targets: with the {@code active-queries} throttle on, pgbench's p99 within 1.25× of pgbench
   * alone (the mean p99 of the alone phases) and the backfill at ≥ 50 % of its unthrottled speed;
   * the {@code replica-lag} check holds within one interval of the lag crossing its threshold and
   * releases within one interval of the lag falling below {@code resumeBelow} (plus the watch's 100
   * ms sampling). The replica phase's lag is made by the replica's apply delay, not by the
   * backfill, so its p99 is printed but not judged.
   */
  private String verdict(List<Phase> phases) {
    Map<String, Phase> byName = new LinkedHashMap<>();
    phases.forEach(p -> byName.put(p.name(), p));
    // pgbench alone is the reference: the mean of its p99s when it ran more than once (before and
    // after the other phases), since a busy machine moves it more than the backfill does.
    double aloneP99 =
        phases.stream()
            .filter(p -> p.name().equals("alone"))
            .mapToDouble(Phase::p99Millis)
            .average()
            .orElse(Double.NaN);
    boolean alone = !Double.isNaN(aloneP99);
    Phase unthrottled = byName.get("unthrottled");
    List<String> parts = new ArrayList<>();
    if (alone) {
      parts.add(f("alone: p99 %.2f ms (mean of the alone phases)", aloneP99));
    }
    if (unthrottled != null && alone) {
      parts.add(f("unthrottled: p99 %.2fx alone", unthrottled.p99Millis() / aloneP99));
    }
    Phase active = byName.get("active");
    if (active != null && alone && unthrottled != null) {
      double p99 = active.p99Millis() / aloneP99;
      double share = active.keysPerSecond() / unthrottled.keysPerSecond();
      parts.add(
          f(
              "active: p99 %.2fx alone (target <= 1.25: %s), backfill %.0f%% of unthrottled"
                  + " (target >= 50%%: %s)",
              p99, p99 <= 1.25 ? "met" : "NOT met", 100 * share, share >= 0.5 ? "met" : "NOT met"));
    }
    if (replicaReaction != null) {
      parts.add(replicaReaction);
    }
    return String.join("; ", parts);
  }

  /** The replica phase's reaction times against one interval, for the verdict. */
  private String replicaReaction;

  // ---------------------------------------------------------------------------------------------
  // Phases

  private Phase alone() throws Exception {
    System.out.println("-- alone: pgbench only");
    freshTables();
    CpuMeter.Reading before = cpu.read();
    WalMeter.Reading written = wal.read();
    Pgbench result = pgbench("alone");
    return new Phase(
        "alone", result, 0, 0, Double.NaN, result.p99(), cpu(before) + "; " + wal.since(written));
  }

  /**
   * pgbench beside runs of the backfill created with {@code settings} added to their body, on a
   * Dripline JVM with {@code env} added.
   */
  private Phase beside(String name, Map<String, String> env, Map<String, Object> settings)
      throws Exception {
    System.out.println("-- " + name + ": pgbench beside a run of " + PgbenchAccountsBackfill.NAME);
    services.stopDripline();
    freshTables();
    services.ensureDripline(env);
    BackfillLoad load = new BackfillLoad(settings);
    load.start();
    Measured measured = measure(load, name);
    long keys = load.stop();
    return measured.phase(name, load, load.runs() + f("; %d keys in all", keys));
  }

  /** The replica phase on a replica made for it and removed after it, whatever happens. */
  private Phase replica() throws Exception {
    script("up");
    try {
      return replicaUp();
    } finally {
      script("down");
    }
  }

  private Phase replicaUp() throws Exception {
    int port = config.intOption("w6-replica-port", 5433);
    int lagThreshold = config.intOption("w6-lag-threshold", 2);
    int delay = config.intOption("w6-lag-delay", 10);
    script("delay", "0");
    String replicaUrl =
        config.dbUrl().replaceFirst("//([^/:]+)(:\\d+)?/", "//127.0.0.1:" + port + "/");
    String check =
        f(
            """
                  lag:
                    kind: replica-lag
                    url: "%s"
                    user: %s
                    password: %s
                    threshold: %d
                    interval: %ds
            """,
            replicaUrl, config.dbUser(), config.dbPassword(), lagThreshold, interval);
    System.out.println(
        "-- replica: pgbench beside a run held on replay lag > " + lagThreshold + " s");
    services.stopDripline();
    freshTables();
    awaitCaughtUp(replicaUrl, lagThreshold * 0.8);
    services.ensureDripline(checks(check));
    BackfillLoad load = new BackfillLoad(paced());
    LagWatch lag = new LagWatch(replicaUrl, lagThreshold, lagThreshold * 0.8);
    load.start();
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
    Measured measured =
        measure(
            load,
            "replica",
            () -> {
              lag.start();
              delays.start();
            });
    delays.join();
    load.stop();
    lag.stop();
    long holdMs = lag.holdAt == 0 || lag.overAt == 0 ? -1 : lag.holdAt - lag.overAt;
    long releaseMs = lag.releaseAt == 0 || lag.clearAt == 0 ? -1 : lag.releaseAt - lag.clearAt;
    long bound = interval * 1000L + LagWatch.SAMPLE_MS;
    replicaReaction =
        f(
            "replica: held %s after the lag crossed %d s, released %s after it fell below %.1f s"
                + " (target <= %d ms, one interval and the watch's sampling: %s)",
            holdMs < 0 ? "never" : holdMs + " ms",
            lagThreshold,
            releaseMs < 0 ? "never" : releaseMs + " ms",
            lagThreshold * 0.8,
            bound,
            holdMs >= 0 && releaseMs >= 0 && holdMs <= bound && releaseMs <= bound
                ? "met"
                : "NOT met");
    return measured.phase(
        "replica",
        load,
        f(
            "%s; lag over %d s at %s, held %s later; below %.1f s at %s, released %s later",
            load.runs(),
            lagThreshold,
            lag.overAt == 0 ? "never" : f("%.1f s", lag.overAt / 1e3),
            holdMs < 0 ? "never" : holdMs + " ms",
            lagThreshold * 0.8,
            lag.clearAt == 0 ? "never" : f("%.1f s", lag.clearAt / 1e3),
            releaseMs < 0 ? "never" : releaseMs + " ms"));
  }

  /** Waits (up to 2 min) until the replica has replayed to less than {@code seconds} behind. */
  private void awaitCaughtUp(String replicaUrl, double seconds) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    try (Connection replica =
            DriverManager.getConnection(replicaUrl, config.dbUser(), config.dbPassword());
        Statement read = replica.createStatement()) {
      while (true) {
        try (ResultSet row = read.executeQuery(LagWatch.LAG)) {
          if (row.next() && row.getObject(1) != null && row.getDouble(1) < seconds) {
            return;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the replica is not caught up within 2 min");
        }
        Thread.sleep(200);
      }
    }
  }

  private Measured measure(BackfillLoad load, String name) throws Exception {
    return measure(load, name, () -> {});
  }

  /**
   * Lets the backfill warm up ({@code --w6-warmup}: the fresh Dripline JVM compiles its hot code
   * before the clock starts), runs pgbench and counts the keys the backfill processed during
   * pgbench's run only; {@code atStart} runs just before pgbench starts.
   */
  private Measured measure(BackfillLoad load, String name, Runnable atStart) throws Exception {
    Thread.sleep(warmup * 1000L);
    atStart.run();
    CpuMeter.Reading before = cpu.read();
    WalMeter.Reading written = wal.read();
    long keysBefore = load.keys();
    long start = System.nanoTime();
    Pgbench result = pgbench(name);
    double elapsed = (System.nanoTime() - start) / 1e9;
    long keys = load.keys() - keysBefore;
    String used = cpu(before) + "; " + wal.since(written);
    System.out.println("   cpu: " + used);
    return new Measured(result, keys / elapsed, used);
  }

  /** pgbench's figures and the backfill's speed over the same window. */
  private record Measured(Pgbench pgbench, double keysPerSecond, String cpu) {
    Phase phase(String name, BackfillLoad load, String note) {
      return new Phase(
          name,
          pgbench,
          keysPerSecond,
          load.heldShare(),
          pgbench.p99Where(load::heldAt, true),
          pgbench.p99Where(load::heldAt, false),
          note + "; cpu " + cpu);
    }
  }

  /**
   * CPU seconds of the Dripline JVM and the dev server, and the machine's, since {@code before}.
   */
  private String cpu(CpuMeter.Reading before) {
    Map<String, Double> used = cpu.read().since(before);
    return f(
        "dripline %.1f s, temporal %.1f s, machine busy %.1f s idle %.1f s",
        used.get("dripline"), used.get("temporal"), used.get("busy"), used.get("idle"));
  }

  /**
   * The same start for every phase: pgbench's history emptied and its tables vacuumed, so a phase
   * does not pay for the dead rows the backfill of the phase before left in {@code
   * pgbench_accounts} (pgbench itself runs with {@code -n}, no vacuum of its own).
   */
  private void freshTables() throws SQLException {
    try (Connection connection =
            DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
        Statement statement = connection.createStatement()) {
      statement.execute("truncate pgbench_history");
      statement.execute(
          "vacuum (analyze) pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history");
    }
  }

  private String activeCheck() {
    return f(
        """
              load:
                kind: active-queries
                threshold: %d
                resume-below: %d
                interval: %ds
        """,
        config.intOption("w6-active-threshold", 6),
        config.intOption("w6-active-resume", 3),
        interval);
  }

  /**
   * What a throttled phase's runs add to their create body: {@code niceRatio} from {@code
   * --w6-nice-ratio} when it is above 0 (a lane rests that multiple of each batch's duration).
   */
  private Map<String, Object> paced() {
    double ratio = Double.parseDouble(config.option("w6-nice-ratio", "0"));
    return ratio > 0 ? Map.of("niceRatio", ratio) : Map.of();
  }

  /** A configuration file declaring {@code checkYaml}; the env naming it. */
  private Map<String, String> checks(String checkYaml) throws IOException {
    Path file = work.resolve("checks.yml").toAbsolutePath();
    Files.writeString(file, "dripline:\n  throttle:\n    checks:\n" + checkYaml);
    return Map.of("MICRONAUT_CONFIG_FILES", file.toString());
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  /**
   * Creates a run of the backfill; the first of a phase ({@code awaitBatch}) waits until a batch
   * has started, a later one (perhaps created while a check holds) does not.
   */
  private long startRun(boolean awaitBatch, Map<String, Object> settings) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", PgbenchAccountsBackfill.NAME);
    body.put("batchSize", batchSize);
    body.put("maxParallelBatches", cap);
    body.putAll(settings);
    Services.Response response = services.post("/api/runs", body);
    if (response.status() != 201) {
      throw new IllegalStateException(
          "POST /api/runs answered " + response.status() + ": " + response.body());
    }
    long run = response.body().get("id").asLong();
    if (!awaitBatch) {
      return run;
    }
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
   * table is small next to the backfill's speed), until stopped. A thread of its own samples every
   * 200 ms whether a hold keeps the backfill's runs from starting batches, with the time, so
   * pgbench's transactions can be told apart by whether the run was held when they ended.
   */
  private final class BackfillLoad {
    private static final long SAMPLE_MS = 200;
    private final AtomicBoolean done = new AtomicBoolean();
    private final Thread thread = new Thread(this::keepGoing, "w6-backfill");
    private final Thread sampler = new Thread(this::sample, "w6-held");
    private final List<Long> runs = new CopyOnWriteArrayList<>();
    private final NavigableMap<Long, Boolean> heldAt = new ConcurrentSkipListMap<>();
    private final Map<String, Object> settings;
    private volatile RuntimeException failure;

    BackfillLoad(Map<String, Object> settings) {
      this.settings = settings;
    }

    void start() throws InterruptedException {
      runs.add(startRun(true, settings));
      thread.start();
      sampler.start();
    }

    private void keepGoing() {
      try {
        while (!done.get()) {
          long current = runs.get(runs.size() - 1);
          if ("completed"
              .equals(services.queryString("select status from runs where id = ?", current))) {
            runs.add(startRun(false, settings));
          }
          Thread.sleep(200);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        failure = e;
      }
    }

    private void sample() {
      try {
        while (!done.get()) {
          boolean held =
              services.queryLong(
                      "select cardinality(dripline_run_holds(?))", PgbenchAccountsBackfill.NAME)
                  > 0;
          heldAt.put(System.currentTimeMillis(), held);
          Thread.sleep(SAMPLE_MS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        failure = e;
      }
    }

    /** The keys this phase's runs have processed so far. */
    long keys() {
      long keys = 0;
      for (long run : runs) {
        keys +=
            services.queryLong(
                "select coalesce(sum(processed_keys), 0) from run_key_counts where run_id = ?",
                run);
      }
      return keys;
    }

    /** Stops the current run; the keys all of this phase's runs processed. */
    long stop() throws InterruptedException {
      done.set(true);
      thread.join();
      sampler.join();
      if (failure != null) {
        throw failure;
      }
      stopRun(runs.get(runs.size() - 1));
      return keys();
    }

    /** Whether the run was held at the last sample at or before {@code epochMillis}. */
    boolean heldAt(long epochMillis) {
      Map.Entry<Long, Boolean> sample = heldAt.floorEntry(epochMillis);
      return sample != null && sample.getValue();
    }

    double heldShare() {
      return heldAt.isEmpty()
          ? 0
          : (double) heldAt.values().stream().filter(h -> h).count() / heldAt.size();
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
    static final long SAMPLE_MS = 100;
    static final String LAG = "select extract(epoch from now() - pg_last_xact_replay_timestamp())";
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
          try (ResultSet row = read.executeQuery(LAG)) {
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
          Thread.sleep(SAMPLE_MS);
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
  record Pgbench(double tps, double p50, double p99, long transactions, List<Transaction> log) {
    /** p99 over the transactions that ended when {@code held} said {@code wanted}; NaN if none. */
    double p99Where(LongPredicate held, boolean wanted) {
      List<Long> chosen = new ArrayList<>();
      for (Transaction t : log) {
        if (held.test(t.endEpochMillis()) == wanted) {
          chosen.add(t.latencyMicros());
        }
      }
      chosen.sort(Long::compare);
      return percentile(chosen, 0.99);
    }
  }

  /** One line of pgbench's per-transaction log: when it ended and how long it took. */
  record Transaction(long endEpochMillis, long latencyMicros) {}

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
    // Each line: client_id transaction_no time script_no time_epoch time_us [schedule_lag]; time
    // is the latency in µs (with -R including the schedule lag), time_epoch.time_us its end.
    List<Transaction> log = new ArrayList<>();
    try (Stream<Path> files = Files.list(logs)) {
      for (Path file : files.toList()) {
        for (String line : Files.readAllLines(file)) {
          String[] fields = line.trim().split("\\s+");
          if (fields.length >= 6 && !fields[2].equals("skipped")) {
            long end = Long.parseLong(fields[4]) * 1000 + Long.parseLong(fields[5]) / 1000;
            log.add(new Transaction(end, Long.parseLong(fields[2])));
          }
        }
      }
    }
    List<Long> latencies = new ArrayList<>(log.stream().map(Transaction::latencyMicros).toList());
    latencies.sort(Long::compare);
    return new Pgbench(
        reported, percentile(latencies, 0.50), percentile(latencies, 0.99), latencies.size(), log);
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
    String output = new String(process.getInputStream().readAllBytes(), UTF_8);
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
    String output = new String(process.getInputStream().readAllBytes(), UTF_8);
    if (process.waitFor() != 0) {
      throw new IllegalStateException(
          "bin/dripline-replica " + String.join(" ", args) + ":\n" + output);
    }
  }
}
