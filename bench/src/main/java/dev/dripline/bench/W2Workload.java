package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;
import static dev.dripline.bench.BenchMain.max;
import static dev.dripline.bench.BenchMain.median;
import static dev.dripline.bench.BenchMain.sleep;

import dev.dripline.examples.ExampleSeeder;
import dev.dripline.examples.NormalizeEmailsBackfill;
import dev.dripline.store.keys.KeyCodec;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * W2, real work: {@code example.normalize-emails} (or, with {@code --w2-example handles}, {@code
 * example.normalize-handles}: a uuid key, K3) over {@code --w2-rows} seeded rows, batch {@code
 * --w2-batch-size}, cap {@code --w2-cap}, on three systems in the same invocation:
 *
 * <ul>
 *   <li><b>D</b>, Dripline: {@code POST /api/runs} on the bench's Dripline JVM; timed from just
 *       before the POST to the run's {@code finished_at}. The run must end {@code completed}.
 *   <li><b>J</b>, a plain JDBC thread pool ({@link W2JdbcPool}) of {@code cap} threads.
 *   <li><b>S</b>, a Spring Batch partitioned step ({@link W2SpringBatch}) with {@code cap} threads
 *       and its JobRepository in the same database.
 * </ul>
 *
 * All three run the statements Dripline runs for the example ({@link W2Example}: for emails {@link
 * NormalizeEmailsBackfill#KEYS_AFTER_SQL} to plan, {@link NormalizeEmailsBackfill#BATCH_SQL} per
 * batch) over the same ranges ({@link W2Ranges}: checked against a reference plan after every run).
 * Before every run the data is reset to the same state (truncate, {@link ExampleSeeder#ensureUsers}
 * — ids 1..N, nine in ten emails messy — or {@link ExampleSeeder#ensureAccounts}, {@code VACUUM
 * (FREEZE, ANALYZE)}, {@code CHECKPOINT} when the role may); after every run every row must hold
 * its normalised value, or W2 fails. Autovacuum is switched off for the example's table (the reset
 * vacuums it), so it cannot land in one system's run and not another's.
 *
 * <p>Order: an optional warm-up run of each system (not counted), then repetitions whose order
 * rotates (D,J,S / J,S,D / S,D,J …). Printed: every run, medians, ratios D/J and D/S, and
 * PostgreSQL's own counts per batch ({@link W2Stats}).
 *
 * <p>Options ({@code --w2-<name> value}):
 *
 * <ul>
 *   <li>{@code example} (emails): {@code emails}, {@code handles} or both ({@code emails,handles}:
 *       W2 runs once for each); handles runs D and J only (summary line {@code W2 uuid});
 *   <li>{@code rows} (1000000): rows seeded into the example's table for each run;
 *   <li>{@code batch-size} (1000), {@code cap} (4): keys per batch, parallel batches / threads;
 *   <li>{@code systems} (D,J,S): which systems to run; B ({@link W2Bookkeeping}) when named;
 *   <li>{@code warmup-rows} (1000000; 0 = none): rows of the warm-up run of each system;
 *   <li>{@code warmups} (1): warm-up runs of each system, one system after the other (a JVM's JIT
 *       compiles per-batch code after thousands of calls: a worker that ran for hours has it
 *       compiled, one that ran a thousand batches has not);
 *   <li>{@code prewarm-runs} (10; 0 = none), {@code prewarm-rows} (200000), {@code
 *       prewarm-batch-size} (20): before those, warm-up runs of many small batches of each system,
 *       one system after the other. Code a Dripline run executes a few times per run (the POST, the
 *       workflow's start and end, planning) reaches the JIT's thresholds only after tens of runs,
 *       code it executes per batch after ten thousand batches or more (a 1,000,000-row run has
 *       900); until then its compilation lands in every measured run. Small pre-warm batches give
 *       many batches quickly: ten runs of 200,000 rows in batches of 20 (100,000 batches) leave the
 *       Dripline JVM's compiler threads little left to compile in a measured run. The defaults are
 *       that steady state; {@code --w2-prewarm-runs 0 --w2-warmup-rows 200000} is a short warm-up,
 *       with the JIT still compiling;
 *   <li>{@code settle-ms} (11000): wait after a run before reading pg_stat_database (see W2Stats);
 *   <li>{@code top} (12): statements listed per system from the last repetition;
 *   <li>{@code checkpoint} (on): CHECKPOINT after each reset (skipped if not permitted);
 *   <li>{@code pin-db} (off): on pins PostgreSQL to the last CPU and the JVMs and the dev server to
 *       the others ({@link CpuPinning}), as if the database had a host of its own: what each system
 *       costs the database is then what slows it, not the CPU its own processes take from the
 *       database on a shared machine.
 * </ul>
 */
final class W2Workload {
  private static final List<String> ALL_SYSTEMS = List.of("D", "J", "S", "B");
  private static final Map<String, String> NAMES =
      Map.of(
          "D",
          "Dripline",
          "J",
          "JDBC pool",
          "S",
          "Spring Batch",
          "B",
          "JDBC pool + Dripline's record");
  private static final String POLL_SQL =
      W2Stats.BENCH_MARK + "select status, 1 as w2_bench from runs where id = ?";

  /** Suffix of a part that is the JIT compiler threads' share of the JVM part before it. */
  private static final String JIT_SHARE = "-jit";

  /**
   * The machine's busy CPU time ({@link CpuMeter#BUSY}): printed as {@code others}, what it holds
   * beyond the measured parts (other processes, the kernel's interrupt time), not added again.
   */
  private static final String MACHINE_BUSY = "machine";

  /** The machine's steal time ({@link CpuMeter#STEAL}), printed after the total. */
  private static final String MACHINE_STEAL = "steal";

  /** The machine's idle and I/O-wait time ({@link CpuMeter#IDLE}), printed after the total. */
  private static final String MACHINE_IDLE = "idle";

  /** The whole machine's parts: printed after the total, not added to it. */
  private static final List<String> MACHINE_PARTS =
      List.of(MACHINE_BUSY, MACHINE_STEAL, MACHINE_IDLE);

  /** A HotSpot JIT compiler thread's name as {@code /proc} shows it (15 characters at most). */
  private static final String[] JIT_THREADS = {"C1 CompilerThre", "C2 CompilerThre"};

  private final BenchConfig config;
  private final Services services;
  private final int rows;
  private final int batchSize;
  private final int cap;
  private final int warmupRows;
  private final int warmups;
  private final int prewarmRuns;
  private final int prewarmRows;
  private final int prewarmBatchSize;
  private final int settleMs;
  private final int top;
  private final List<String> systems;
  private final W2Example example;
  private boolean checkpoint;

  private Connection db;
  private W2Stats stats;
  private CpuMeter cpu;
  private double idleCommitsPerSecond;
  private W2SpringBatch spring;
  private WorkflowServiceStubs stubs;
  private final boolean pinDatabase;
  private CpuPinning pinning;
  private W3History history;

  /** The examples {@code --w2-example} names, in order: W2 runs once for each. */
  static List<W2Example> examples(BenchConfig config) {
    List<W2Example> examples = new ArrayList<>();
    for (String name : config.option("w2-example", "emails").split(",")) {
      W2Example example = W2Example.named(name.trim());
      if (!examples.contains(example)) {
        examples.add(example);
      }
    }
    return examples;
  }

  /** The summary line's name: {@code W2} for emails, {@code W2 uuid} for handles. */
  static String verdictName(W2Example example) {
    return example == W2Example.EMAILS ? "W2" : "W2 uuid";
  }

  W2Workload(BenchConfig config, Services services, W2Example example) {
    this.config = config;
    this.services = services;
    this.rows = config.intOption("w2-rows", 1_000_000);
    this.batchSize = config.intOption("w2-batch-size", 1000);
    this.cap = config.intOption("w2-cap", 4);
    this.warmupRows = config.intOption("w2-warmup-rows", 1_000_000);
    this.warmups = config.intOption("w2-warmups", 1);
    this.prewarmRuns = config.intOption("w2-prewarm-runs", 10);
    this.prewarmRows = config.intOption("w2-prewarm-rows", 200_000);
    this.prewarmBatchSize = config.intOption("w2-prewarm-batch-size", 20);
    this.pinDatabase = config.option("w2-pin-db", "off").equalsIgnoreCase("on");
    this.settleMs = config.intOption("w2-settle-ms", 11_000);
    this.top = config.intOption("w2-top", 12);
    this.checkpoint = !config.option("w2-checkpoint", "on").equalsIgnoreCase("off");
    List<String> chosen = new ArrayList<>();
    for (String s : config.option("w2-systems", "D,J,S").split(",")) {
      String system = s.trim().toUpperCase(Locale.ROOT);
      if (!ALL_SYSTEMS.contains(system)) {
        throw new IllegalArgumentException("--w2-systems takes D, J, S and B, not " + s);
      }
      // Spring Batch's job and system B's bookkeeping are written for bigint keys: emails only.
      boolean runs = example == W2Example.EMAILS || system.equals("D") || system.equals("J");
      if (runs && !chosen.contains(system)) {
        chosen.add(system);
      }
    }
    this.systems = List.copyOf(chosen);
    this.example = example;
    if (rows < 1 || batchSize < 1 || prewarmBatchSize < 1 || cap < 1 || systems.isEmpty()) {
      throw new IllegalArgumentException(
          "--w2-rows, --w2-batch-size, --w2-prewarm-batch-size, --w2-cap must be at least 1 and"
              + " --w2-systems not empty");
    }
  }

  // ------------------------------------------------------------------------------------------
  // Results

  /**
   * The reference plan of the current data in batches of {@code batchSize}: what every system must
   * do.
   */
  private record Reference(int rows, int batchSize, long scope, W2Ranges.Fingerprint ranges) {}

  /** One measured run of one system. */
  private record Run(
      String system,
      double seconds,
      int batches,
      long rowsUpdated,
      Map<String, W2Stats.Group> statements,
      List<W2Stats.Top> top,
      W2Stats.Counters counters,
      long commits,
      double window,
      double load,
      String detail,
      Map<String, Double> cpu) {

    W2Stats.Group group(String category) {
      return statements.getOrDefault(category, W2Stats.Group.NONE);
    }

    /** The system's own bookkeeping statements: Dripline's engine, Spring's JobRepository. */
    W2Stats.Group book() {
      return switch (system) {
        case "D" -> group("other");
        case "S" -> group("spring");
        default -> W2Stats.Group.NONE;
      };
    }

    /** Statements of none of the above (for D they are in {@link #book}). */
    W2Stats.Group background() {
      return system.equals("D") ? W2Stats.Group.NONE : group("other");
    }
  }

  // ------------------------------------------------------------------------------------------

  String run() throws Exception {
    System.out.println();
    System.out.println(
        f(
            "== W2 real work: %s over %,d rows, batch %d, cap %d; systems %s; %d reps"
                + " (rotating order; pre-warm-up %s, warm-up %d x %,d rows each)",
            example.backfill,
            rows,
            batchSize,
            cap,
            String.join(",", systems),
            config.reps(),
            prewarmRuns > 0
                ? f("%d x %,d rows in batches of %d", prewarmRuns, prewarmRows, prewarmBatchSize)
                : "none",
            warmups,
            warmupRows));
    System.out.println(
        "D = Dripline (POST /api/runs .. runs.finished_at); J = JDBC thread pool (HikariCP, "
            + cap
            + " threads, in the bench JVM); S = Spring Batch partitioned step ("
            + cap
            + " threads, JobRepository in this database, in the bench JVM)");
    services.ensureDripline();
    db = DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
    try {
      stats = new W2Stats(db);
      long postmaster = CpuMeter.parentPid(services.backendPids().get(0));
      cpu =
          new CpuMeter()
              .part("dripline-jvm", () -> List.of(services.driplinePid()))
              .threads("dripline" + JIT_SHARE, () -> List.of(services.driplinePid()), JIT_THREADS)
              .part("bench-jvm", () -> List.of(ProcessHandle.current().pid()))
              .threads(
                  "bench" + JIT_SHARE, () -> List.of(ProcessHandle.current().pid()), JIT_THREADS)
              .part("temporal", services::temporalPids)
              .tree("postgres", () -> postmaster)
              .machine(MACHINE_BUSY, CpuMeter.BUSY)
              .machine(MACHINE_STEAL, CpuMeter.STEAL)
              .machine(MACHINE_IDLE, CpuMeter.IDLE);
      prepare();
      if (pinDatabase) {
        pinning = new CpuPinning();
        if (!pinning.possible()) {
          throw new IllegalStateException(
              "--w2-pin-db on needs at least 2 CPUs and /usr/bin/taskset");
        }
        pinning.pinDatabase(postmaster);
        List<Long> others = new ArrayList<>(services.temporalPids());
        others.add(services.driplinePid());
        others.add(ProcessHandle.current().pid());
        pinning.pinOthers(others);
        System.out.println(
            f(
                "CPU pinning: PostgreSQL (postmaster %d and its children) on CPU %s; the Dripline"
                    + " JVM, the bench JVM and the Temporal dev server on CPU %s",
                postmaster, pinning.databaseCpus(), pinning.otherCpus()));
      }
      if (systems.contains("S")) {
        spring = new W2SpringBatch(config.dbUrl(), config.dbUser(), config.dbPassword(), cap);
      }
      if (prewarmRuns > 0 && prewarmRows > 0) {
        preWarm();
      }
      if (warmupRows > 0 && warmups > 0) {
        warmUp();
      }
      measureIdle();
      return measure();
    } finally {
      if (pinning != null) {
        pinning.release();
      }
      if (spring != null) {
        spring.close();
      }
      if (stubs != null) {
        stubs.shutdownNow();
      }
      db.close();
    }
  }

  private void prepare() throws Exception {
    System.out.println(stats.statementsNote());
    if (!stats.statementsAvailable()) {
      System.out.println(
          "WARNING: statement counts are not available; bin/dripline-bench loads"
              + " pg_stat_statements when W2 is requested (see its log)");
    }
    try (Statement statement = db.createStatement()) {
      statement.execute(
          "alter table "
              + example.table
              + " set (autovacuum_enabled = false, toast.autovacuum_enabled = false)");
    }
    if (checkpoint) {
      try (Statement statement = db.createStatement()) {
        statement.execute("checkpoint");
      } catch (SQLException e) {
        checkpoint = false;
        System.out.println(
            "CHECKPOINT not permitted (" + e.getMessage().lines().findFirst().orElse("") + ")");
      }
    }
    System.out.println(
        "reset before every run: truncate "
            + example.table
            + ", ExampleSeeder."
            + (example == W2Example.EMAILS ? "ensureUsers" : "ensureAccounts")
            + ", vacuum (freeze, analyze)"
            + (checkpoint ? ", checkpoint" : " (no checkpoint)"));
    stopActiveRuns();
  }

  /** A run of the example left active by an interrupted bench would make the POST a conflict. */
  private void stopActiveRuns() {
    List<Long> active = new ArrayList<>();
    try (PreparedStatement statement =
        db.prepareStatement(
            "select id from runs where backfill = ?"
                + " and status in ('pending', 'running', 'paused')")) {
      statement.setString(1, example.backfill);
      try (ResultSet rs = statement.executeQuery()) {
        while (rs.next()) {
          active.add(rs.getLong(1));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    for (long id : active) {
      System.out.println("stopping run " + id + " of " + example.backfill + " left active");
      services.post("/api/runs/" + id + "/stop", Map.of());
      BenchMain.awaitTerminal(services, id, Duration.ofMinutes(5), 200);
    }
  }

  /** {@code prewarm-runs} short runs of each system; prints each system's median (not counted). */
  private void preWarm() throws Exception {
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    long start = System.nanoTime();
    for (int i = 0; i < prewarmRuns; i++) {
      for (String system : systems) {
        Run run = execute(system, reset(prewarmRows, prewarmBatchSize), false);
        seconds.computeIfAbsent(system, s -> new ArrayList<>()).add(run.seconds());
      }
    }
    List<String> parts = new ArrayList<>();
    seconds.forEach((system, times) -> parts.add(f("%s %.2f s", system, median(times))));
    System.out.println(
        f(
            "pre-warm-up (%d x %,d rows, batch %d, %.0f s in all): median run %s (not counted)",
            prewarmRuns,
            prewarmRows,
            prewarmBatchSize,
            (System.nanoTime() - start) / 1e9,
            String.join(", ", parts)));
  }

  private void warmUp() throws Exception {
    List<String> parts = new ArrayList<>();
    for (int round = 0; round < warmups; round++) {
      for (String system : systems) {
        Reference reference = reset(warmupRows, batchSize);
        Run run = execute(system, reference, false);
        parts.add(f("%s %.2f s", system, run.seconds()));
      }
    }
    System.out.println(
        f(
            "warm-up (%d x %,d rows): %s (not counted)",
            warmups, warmupRows, String.join(", ", parts)));
    // Let every backend flush its statistics, so the first measured run starts clean.
    sleep(settleMs);
  }

  /**
   * What the database does while no system runs (the idle Dripline JVM's metrics snapshots, its
   * pool): the background every run's counts include. Counted over one settle period.
   */
  private void measureIdle() throws Exception {
    W2Stats.Counters before = stats.counters();
    stats.resetStatements();
    long start = System.nanoTime();
    sleep(settleMs);
    Map<String, W2Stats.Group> statements = stats.statements();
    W2Stats.Counters delta = stats.counters().minus(before);
    double seconds = (System.nanoTime() - start) / 1e9;
    idleCommitsPerSecond =
        Math.max(0, (delta.commits() - 3 - (stats.statementsAvailable() ? 2 : 0)) / seconds);
    long calls = 0;
    double ms = 0;
    for (Map.Entry<String, W2Stats.Group> e : statements.entrySet()) {
      if (!e.getKey().equals("bench")) {
        calls += e.getValue().calls();
        ms += e.getValue().ms();
      }
    }
    System.out.println(
        f(
            "background (no system running, %.1f s): %.1f commits/s, %.1f rows written/s to"
                + " bookkeeping tables%s",
            seconds,
            idleCommitsPerSecond,
            delta.bookRowsWritten() / seconds,
            stats.statementsAvailable()
                ? f(", %.1f statements/s (%.1f ms/s)", calls / seconds, ms / seconds)
                : ""));
  }

  private String measure() throws Exception {
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    for (String s : systems) {
      runs.put(s, new ArrayList<>());
    }
    System.out.println();
    System.out.println(
        "rep  order   sys   wall_s     rows/s  batches  upd_ms/b  slot_use  book_calls  book_ms"
            + "  txctl  other  commits  book_rows  load");
    for (int rep = 1; rep <= config.reps(); rep++) {
      List<String> order = rotate(systems, rep - 1);
      for (String system : order) {
        Reference reference = reset(rows, batchSize);
        Run run = execute(system, reference, true);
        runs.get(system).add(run);
        printRun(rep, String.join(",", order), run);
      }
    }
    return summarize(runs);
  }

  private static List<String> rotate(List<String> list, int by) {
    List<String> rotated = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      rotated.add(list.get((i + by) % list.size()));
    }
    return rotated;
  }

  private void printRun(int rep, String order, Run run) {
    W2Stats.Group data = run.group("data");
    System.out.println(
        f(
            "%3d  %-6s  %-3s  %7.2f  %9.0f  %7d  %8.1f  %8.2f  %10d  %7.0f  %5d  %5d  %7d  %9d  %4.1f",
            rep,
            order,
            run.system(),
            run.seconds(),
            rows / run.seconds(),
            run.batches(),
            data.calls() == 0 ? 0 : data.ms() / data.calls(),
            data.ms() / (cap * run.seconds() * 1000),
            run.book().calls(),
            run.book().ms(),
            run.group("txctl").calls(),
            run.background().calls(),
            run.commits(),
            run.counters().bookRowsWritten(),
            run.load()));
    if (run.detail() != null) {
      System.out.println("     " + run.detail());
    }
    System.out.println("     cpu s: " + cpuLine(run.cpu()));
  }

  /**
   * CPU seconds per part, and in all; a {@link #JIT_SHARE} part is printed in brackets after its
   * JVM's part and not added again. After the total, what the machine's CPUs did besides: {@code
   * others}, busy time outside the measured processes, {@code steal}, time the hypervisor gave to
   * another machine, and {@code idle}, time no process wanted a CPU.
   */
  private static String cpuLine(Map<String, Double> used) {
    StringBuilder line = new StringBuilder();
    double total = 0;
    for (Map.Entry<String, Double> e : used.entrySet()) {
      if (MACHINE_PARTS.contains(e.getKey())) {
        continue;
      }
      if (e.getKey().endsWith(JIT_SHARE)) {
        line.setLength(line.length() - 2);
        line.append(f(" [jit %.2f]  ", e.getValue()));
        continue;
      }
      total += e.getValue();
      line.append(f("%s %.2f  ", e.getKey(), e.getValue()));
    }
    line.append(f("total %.2f", total));
    if (used.containsKey(MACHINE_BUSY)) {
      line.append(f("  (others %.2f", Math.max(0, used.get(MACHINE_BUSY) - total)));
      line.append(f("  steal %.2f", used.getOrDefault(MACHINE_STEAL, 0.0)));
      line.append(f("  idle %.2f)", used.getOrDefault(MACHINE_IDLE, 0.0)));
    }
    return line.toString();
  }

  // ------------------------------------------------------------------------------------------
  // Data

  /**
   * Resets the example's table to {@code n} rows, nine in ten not normalised, and plans the
   * reference ranges, in batches of {@code batchSize} keys.
   */
  private Reference reset(int n, int batchSize) throws SQLException {
    // Its own connection, closed at the end: its backend's statistics are flushed when it exits,
    // not later during a measured run.
    long backend;
    Reference reference;
    try (Connection connection =
        DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword())) {
      try (Statement statement = connection.createStatement();
          ResultSet rs = statement.executeQuery("select pg_backend_pid()")) {
        rs.next();
        backend = rs.getLong(1);
      }
      try (Statement statement = connection.createStatement()) {
        statement.execute("truncate " + example.table + " restart identity");
      }
      example.seed(new ExampleSeeder(connection), n);
      try (Statement statement = connection.createStatement()) {
        statement.execute("vacuum (freeze, analyze) " + example.table);
        // Dripline's own tables as well, as Spring Batch's are emptied before each of its runs:
        // without it every run of D would work among the dead rows of the runs before it.
        statement.execute("vacuum (analyze) batches, runs, run_key_counts, batch_outcome_counters");
        if (checkpoint) {
          statement.execute("checkpoint");
        }
      }
      long scope;
      try (Statement statement = connection.createStatement();
          ResultSet rs = statement.executeQuery(example.scopeSql())) {
        rs.next();
        scope = rs.getLong(1);
      }
      W2Ranges.Fingerprint ranges =
          W2Ranges.Fingerprint.of(W2Ranges.planAll(connection, example, batchSize));
      if (ranges.keys() != scope) {
        throw new IllegalStateException(
            "W2 reference plan covers " + ranges.keys() + " keys, scope is " + scope);
      }
      reference = new Reference(n, batchSize, scope, ranges);
    }
    // Its backend (seeding, vacuum: seconds of CPU) must have ended before the run's CPU reading,
    // or the postmaster would collect its time inside the measured window.
    awaitExit(backend);
    return reference;
  }

  private static void awaitExit(long pid) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
        && System.nanoTime() < deadline) {
      sleep(20);
    }
  }

  /** Fails loudly unless every row holds its normalised value. */
  private void verifyData(String system, Reference reference) throws SQLException {
    try (Statement statement = db.createStatement();
        ResultSet rs = statement.executeQuery(W2Stats.BENCH_MARK + example.wrongRowsSql())) {
      rs.next();
      long count = rs.getLong(1);
      long wrong = rs.getLong(2);
      if (count != reference.rows() || wrong != 0) {
        throw new IllegalStateException(
            f(
                "W2 %s: after the run %s has %d rows (expected %d), %d of them not normalised",
                NAMES.get(system), example.table, count, reference.rows(), wrong));
      }
    }
  }

  private static void verifyWork(
      String system, Reference reference, int batches, long updated, W2Ranges.Fingerprint ranges) {
    if (!ranges.equals(reference.ranges())) {
      throw new IllegalStateException(
          f(
              "W2 %s processed other ranges than the reference plan: %s, expected %s",
              NAMES.get(system), ranges, reference.ranges()));
    }
    if (batches != reference.ranges().batches() || updated != reference.scope()) {
      throw new IllegalStateException(
          f(
              "W2 %s: %d batches, %d rows updated; expected %d batches, %d rows",
              NAMES.get(system),
              batches,
              updated,
              reference.ranges().batches(),
              reference.scope()));
    }
  }

  // ------------------------------------------------------------------------------------------
  // One run

  private Run execute(String system, Reference reference, boolean measured) throws Exception {
    if (system.equals("S")) {
      spring.clearRepository();
    }
    long windowStart = System.nanoTime();
    CpuMeter.Reading cpuBefore = cpu.read();
    W2Stats.Counters before = measured ? stats.counters() : null;
    if (measured) {
      stats.resetStatements();
    }
    long[] polls = new long[1];
    double seconds;
    int batches;
    long updated;
    W2Ranges.Fingerprint ranges;
    String detail = null;
    Map<Long, Map.Entry<String, Double>> threadsBefore = null;
    long runId = 0;
    Instant posted = null;
    switch (system) {
      case "D" -> {
        threadsBefore = CpuMeter.threadSeconds(services.driplinePid());
        posted = Instant.now();
        runId = createRun(reference.batchSize());
        String status = awaitTerminal(runId, polls);
        if (!"completed".equals(status)) {
          throw new IllegalStateException("W2 Dripline run " + runId + " ended " + status);
        }
        Instant finished = queryInstant("select finished_at from runs where id = ?", runId);
        seconds = Duration.between(posted, finished).toNanos() / 1e9;
        List<W2Ranges.Range> done = driplineRanges(runId);
        batches = done.size();
        ranges = W2Ranges.Fingerprint.of(done);
        updated =
            queryLong(
                "select coalesce(sum(processed_keys), 0)::bigint from run_key_counts"
                    + " where run_id = ?",
                runId);
      }
      case "J", "B" -> {
        W2JdbcPool.Result result =
            W2JdbcPool.run(
                config.dbUrl(),
                config.dbUser(),
                config.dbPassword(),
                example,
                cap,
                reference.batchSize(),
                system.equals("B"));
        seconds = result.seconds();
        batches = result.batches();
        updated = result.rowsUpdated();
        ranges = result.ranges();
      }
      case "S" -> {
        W2SpringBatch.Result result = spring.run(reference.batchSize());
        seconds = result.seconds();
        batches = result.batches();
        updated = result.rowsUpdated();
        ranges = result.ranges();
        detail =
            f(
                "S: %d step executions (1 manager + %d partitions)",
                result.stepExecutions(), result.stepExecutions() - 1);
      }
      default -> throw new IllegalStateException(system);
    }
    Map<String, Double> cpuUsed = cpu.read().since(cpuBefore);
    String threads =
        threadsBefore == null
            ? null
            : threadLine(
                CpuMeter.byThreadName(
                    threadsBefore, CpuMeter.threadSeconds(services.driplinePid())));
    double load = loadAverage();
    verifyData(system, reference);
    verifyWork(system, reference, batches, updated, ranges);
    if (system.equals("D")) {
      detail = driplineDetail(runId, posted, seconds) + "\n     " + threads;
    }
    if (!measured) {
      return new Run(
          system, seconds, batches, updated, Map.of(), List.of(), null, 0, 0, load, detail,
          cpuUsed);
    }
    // Read after the checks, so the bench's own statements in the window are all counted here.
    Map<String, W2Stats.Group> statements = stats.statements();
    List<W2Stats.Top> topStatements =
        stats.top(top, List.of("data", "plan", "txctl", "spring", "other"));
    // pg_stat_database and pg_stat_user_tables lag: wait until idle backends have flushed.
    sleep(settleMs);
    W2Stats.Counters delta = stats.counters().minus(before);
    double window = (System.nanoTime() - windowStart) / 1e9;
    // The bench's own transactions in the window (each statement of its connection commits on its
    // own): its marked statements as counted by pg_stat_statements (polls, checks), plus the first
    // counters read and the two statement reads; without pg_stat_statements, polls plus checks.
    long own =
        stats.statementsAvailable()
            ? statements.get("bench").calls() + 3
            : polls[0] + (system.equals("D") ? 10 : 6);
    long commits = delta.commits() - own;
    if (delta.usersUpdated() != reference.scope()) {
      System.out.println(
          f(
              "     note: pg_stat_user_tables counts %d rows updated in %s (expected %d;"
                  + " statistics may lag)",
              delta.usersUpdated(), example.table, reference.scope()));
    }
    return new Run(
        system,
        seconds,
        batches,
        updated,
        statements,
        topStatements,
        delta,
        commits,
        window,
        load,
        detail,
        cpuUsed);
  }

  private long createRun(int batchSize) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", example.backfill);
    body.put("options", Map.of());
    body.put("batchSize", batchSize);
    body.put("maxParallelBatches", cap);
    Services.Response response = services.post("/api/runs", body);
    if (response.status() != 201) {
      throw new IllegalStateException(
          "POST /api/runs answered " + response.status() + ": " + response.body());
    }
    return response.body().get("id").asLong();
  }

  /** Polls the run's status every 50 ms on the bench's connection; counts the polls. */
  private String awaitTerminal(long runId, long[] polls) throws SQLException {
    long deadline = System.nanoTime() + Duration.ofSeconds(Math.max(600, rows / 500)).toNanos();
    try (PreparedStatement statement = db.prepareStatement(POLL_SQL)) {
      statement.setLong(1, runId);
      while (System.nanoTime() < deadline) {
        String status;
        try (ResultSet rs = statement.executeQuery()) {
          status = rs.next() ? rs.getString(1) : null;
        }
        polls[0]++;
        if ("completed".equals(status) || "failed".equals(status) || "stopped".equals(status)) {
          return status;
        }
        sleep(50);
      }
    }
    throw new IllegalStateException("W2 Dripline run " + runId + " did not end in time");
  }

  private List<W2Ranges.Range> driplineRanges(long runId) throws SQLException {
    List<W2Ranges.Range> ranges = new ArrayList<>();
    try (PreparedStatement statement =
        db.prepareStatement(
            W2Stats.BENCH_MARK
                + "select start_key_bytes, end_key_bytes, size, status from batches"
                + " where run_id = ?"
                + " order by number")) {
      statement.setLong(1, runId);
      try (ResultSet rs = statement.executeQuery()) {
        while (rs.next()) {
          if (!"completed".equals(rs.getString(4))) {
            throw new IllegalStateException(
                "W2 Dripline run " + runId + " has a batch " + rs.getString(4));
          }
          ranges.add(
              new W2Ranges.Range(
                  KeyCodec.decode(rs.getBytes(1)), KeyCodec.decode(rs.getBytes(2)), rs.getInt(3)));
        }
      }
    }
    return ranges;
  }

  /**
   * Where a Dripline run's time went, from its batches' timestamps: the first batch's start after
   * the POST, the mean wait from enqueued to started, the mean batch (started to finished: the
   * engine's two transactions around the UPDATE), the UPDATE itself (pg_stat_statements), the tail
   * from the last batch to finished_at, and the mean number of batches executing at once.
   */
  private String driplineDetail(long runId, Instant posted, double seconds) throws SQLException {
    Instant firstStart;
    double queueMs;
    double batchMs;
    double busy;
    Instant lastFinish;
    Instant finished;
    int runCap;
    try (PreparedStatement statement =
        db.prepareStatement(
            W2Stats.BENCH_MARK
                + "select min(b.started_at), avg(extract(epoch from b.started_at - b.enqueued_at)),"
                + " avg(extract(epoch from b.finished_at - b.started_at)),"
                + " sum(extract(epoch from b.finished_at - b.started_at)),"
                + " max(b.finished_at), r.finished_at, r.max_parallel_batches"
                + " from batches b join runs r on r.id = b.run_id where b.run_id = ?"
                + " group by r.finished_at, r.max_parallel_batches")) {
      statement.setLong(1, runId);
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        firstStart = rs.getTimestamp(1).toInstant();
        queueMs = rs.getDouble(2) * 1000;
        batchMs = rs.getDouble(3) * 1000;
        busy = rs.getDouble(4);
        lastFinish = rs.getTimestamp(5).toInstant();
        finished = rs.getTimestamp(6).toInstant();
        runCap = rs.getInt(7);
      }
    }
    // Slot refill: the k-th batch to finish frees the slot the (k + cap)-th batch to be enqueued
    // takes; the gap is the completion's way back through Temporal, the workflow task, the claim
    // (and, every page, planning), i.e. time a slot holds no batch.
    double refillMedianMs;
    double refillMeanMs;
    double refillMaxMs;
    try (PreparedStatement statement =
        db.prepareStatement(
            W2Stats.BENCH_MARK
                + "with f as (select finished_at as t, row_number() over (order by finished_at) k"
                + " from batches where run_id = ?),"
                + " e as (select enqueued_at as t, row_number() over (order by enqueued_at) k"
                + " from batches where run_id = ?),"
                + " g as (select extract(epoch from e.t - f.t) * 1000 as ms"
                + " from f join e on e.k = f.k + ?)"
                + " select percentile_cont(0.5) within group (order by ms), avg(ms), max(ms)"
                + " from g")) {
      statement.setLong(1, runId);
      statement.setLong(2, runId);
      statement.setInt(3, runCap);
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        refillMedianMs = rs.getDouble(1);
        refillMeanMs = rs.getDouble(2);
        refillMaxMs = rs.getDouble(3);
      }
    }
    return f(
            "D run %d (cap %d): first batch started %.0f ms after the POST; per batch:"
                + " enqueued->started %.1f ms, started->finished %.1f ms; slot refill (a batch"
                + " finished -> next enqueued) median %.1f ms, mean %.1f, max %.0f; last batch"
                + " finished -> run finished_at %.0f ms; batches executing at once (mean) %.2f of %d",
            runId,
            runCap,
            Duration.between(posted, firstStart).toNanos() / 1e6,
            queueMs,
            batchMs,
            refillMedianMs,
            refillMeanMs,
            refillMaxMs,
            Duration.between(lastFinish, finished).toNanos() / 1e6,
            busy / seconds,
            runCap)
        + "\n     "
        + workflowDetail(runId);
  }

  /** The Dripline JVM's CPU seconds in the run by thread name: the largest, and the rest. */
  private static String threadLine(List<Map.Entry<String, Double>> byName) {
    StringBuilder line = new StringBuilder("dripline-jvm threads (cpu s):");
    double rest = 0;
    for (int i = 0; i < byName.size(); i++) {
      Map.Entry<String, Double> e = byName.get(i);
      if (i < 10) {
        line.append(f(" %s %.2f;", e.getKey(), e.getValue()));
      } else {
        rest += e.getValue();
      }
    }
    return line.append(f(" others %.2f", rest)).toString();
  }

  /** What the run's workflow did in Temporal: events, workflow tasks, timers, activities. */
  private String workflowDetail(long runId) throws SQLException {
    String workflowId;
    try (PreparedStatement statement =
        db.prepareStatement(W2Stats.BENCH_MARK + "select workflow_id from runs where id = ?")) {
      statement.setLong(1, runId);
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        workflowId = rs.getString(1);
      }
    }
    try {
      W3History.Summary summary = history().summarise(workflowId, "");
      return f(
          "workflow %s (latest execution): %d events, %d workflow tasks, %d timers, activities %s",
          workflowId,
          summary.events(),
          summary.workflowTasks(),
          summary.timers(),
          summary.activities());
    } catch (RuntimeException e) {
      return "workflow " + workflowId + ": history not read (" + e + ")";
    }
  }

  private W3History history() {
    if (history == null) {
      stubs =
          WorkflowServiceStubs.newServiceStubs(
              WorkflowServiceStubsOptions.newBuilder().setTarget(config.temporalAddress()).build());
      history = new W3History(stubs, "default");
    }
    return history;
  }

  // ------------------------------------------------------------------------------------------
  // Summary

  /**
   * Each repetition's ratio of its two runs, their median and range. The two ran minutes apart at
   * most, so the drifts of a machine's speed that move whole invocations (the same work's database
   * CPU can differ widely between invocations) touch both.
   */
  private static String paired(String label, List<Run> a, List<Run> b) {
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      ratios.add(a.get(i).seconds() / b.get(i).seconds());
    }
    return f(
        "  per rep %s: %s (median %.2f, range %.2f..%.2f)",
        label,
        String.join(" ", ratios.stream().map(r -> f("%.2f", r)).toList()),
        median(ratios),
        Collections.min(ratios),
        max(ratios));
  }

  /**
   * The ratio of each system's fastest run: the run least disturbed by whatever else the machine
   * did (a run cannot be faster than its work allows, only slower), next to the medians' ratio,
   * which is the target's figure.
   */
  private static String fastest(String label, List<Run> a, List<Run> b) {
    double fastestA = Collections.min(a.stream().map(Run::seconds).toList());
    double fastestB = Collections.min(b.stream().map(Run::seconds).toList());
    return f(
        "  fastest runs %s: %.2f s / %.2f s = %.2f",
        label, fastestA, fastestB, fastestA / fastestB);
  }

  private String summarize(Map<String, List<Run>> runs) throws SQLException {
    Map<String, Double> medians = new LinkedHashMap<>();
    runs.forEach(
        (system, list) -> medians.put(system, median(list.stream().map(Run::seconds).toList())));
    System.out.println();
    for (String system : systems) {
      double m = medians.get(system);
      System.out.println(
          f(
              "med  %-12s  %7.2f s  %9.0f rows/s  (%s)",
              NAMES.get(system),
              m,
              rows / m,
              String.join(
                  " ", runs.get(system).stream().map(r -> f("%.2f", r.seconds())).toList())));
    }
    Double d = medians.get("D");
    Double j = medians.get("J");
    Double s = medians.get("S");
    if (d != null && j != null) {
      System.out.println(f("ratio D/J (wall time) = %.2f   target <= 1.15", d / j));
      System.out.println(paired("D/J", runs.get("D"), runs.get("J")));
      System.out.println(fastest("D/J", runs.get("D"), runs.get("J")));
    }
    if (d != null && s != null) {
      System.out.println(f("ratio D/S (wall time) = %.2f   target <= 1.00", d / s));
    }
    if (j != null && s != null) {
      System.out.println(f("ratio S/J (wall time) = %.2f", s / j));
    }
    Double b = medians.get("B");
    if (b != null && j != null) {
      System.out.println(
          f("ratio B/J (wall time) = %.2f   (what Dripline's record costs the database)", b / j));
    }
    if (b != null && d != null) {
      System.out.println(
          f("ratio D/B (wall time) = %.2f   (what the rest of Dripline costs)", d / b));
    }

    System.out.println();
    System.out.println(
        "CPU seconds per run (medians over the reps; /proc utime+stime from the start of a run to"
            + " its end; postgres = the postmaster and all its children, ended ones included;"
            + " the bench JVM runs J's and S's threads, the Dripline JVM D's app and worker;"
            + " [jit]: of the JVM's figure before it, its JIT compiler threads; others: the"
            + " machine's busy time (/proc/stat) beyond these processes; steal: time the"
            + " hypervisor took from this machine's CPUs; idle: CPU time nothing wanted, I/O wait"
            + " included)");
    for (String system : systems) {
      Map<String, Double> medianCpu = new LinkedHashMap<>();
      for (String part : runs.get(system).get(0).cpu().keySet()) {
        medianCpu.put(
            part,
            median(runs.get(system).stream().map(r -> r.cpu().getOrDefault(part, 0.0)).toList()));
      }
      System.out.println(f("  %-3s %s", system, cpuLine(medianCpu)));
    }

    System.out.println();
    System.out.println(
        "PostgreSQL per batch (medians over the reps; statements: pg_stat_statements, top-level,"
            + " this database, timed window; commits: pg_stat_database xact_commit, bench's own"
            + " subtracted; book_rows: rows written to tables other than the example's)");
    System.out.println(
        "sys  upd_calls  upd_ms  plan_calls  book_calls  book_ms  txctl  other  commits  net_commits"
            + "  book_rows  slot_use");
    for (String system : systems) {
      List<Run> list = runs.get(system);
      double batches = list.get(0).batches();
      System.out.println(
          f(
              "%-3s  %9.2f  %6.2f  %10.3f  %10.2f  %7.3f  %5.2f  %5.2f  %7.2f  %11.2f  %9.2f  %8.2f",
              system,
              med(list, r -> r.group("data").calls() / batches),
              med(list, r -> r.group("data").ms() / batches),
              med(list, r -> r.group("plan").calls() / batches),
              med(list, r -> r.book().calls() / batches),
              med(list, r -> r.book().ms() / batches),
              med(list, r -> r.group("txctl").calls() / batches),
              med(list, r -> r.background().calls() / batches),
              med(list, r -> r.commits() / batches),
              med(list, r -> (r.commits() - idleCommitsPerSecond * r.window()) / batches),
              med(list, r -> r.counters().bookRowsWritten() / batches),
              med(list, r -> r.group("data").ms() / (cap * r.seconds() * 1000))));
    }
    System.out.println(
        "book = the system's own bookkeeping statements (D: every statement that is not the"
            + " UPDATE, the scope query, transaction control or the bench's; S: Spring Batch's"
            + " batch_* statements and sequences); other = the rest (background: e.g. the idle Dripline JVM's"
            + " metrics snapshots); net_commits = commits less the background rate measured while"
            + " idle times the counting window (run + settle); slot_use = UPDATE execution time /"
            + " (cap x wall time)");
    if (top > 0 && stats.statementsAvailable()) {
      for (String system : systems) {
        List<Run> list = runs.get(system);
        Run last = list.get(list.size() - 1);
        System.out.println();
        System.out.println(
            f(
                "Statements of %s's last measured run, most calls first (per batch, mean ms, total"
                    + " ms):",
                NAMES.get(system)));
        for (W2Stats.Top t : last.top()) {
          System.out.println(
              f(
                  "  %-6s %7.2f/b %8.3f ms %8.0f ms  %s",
                  t.category(),
                  t.calls() / (double) last.batches(),
                  t.ms() / Math.max(1, t.calls()),
                  t.ms(),
                  abbreviate(t.query(), 150)));
        }
      }
      System.out.println();
    }

    StringBuilder verdict = new StringBuilder();
    if (d != null) {
      verdict.append(f("Dripline %.2f s (%.0f rows/s)", d, rows / d));
    }
    if (d != null && j != null) {
      verdict.append(
          f(
              ", JDBC pool %.2f s: D/J %.2f (target <= 1.15: %s)",
              j, d / j, d / j <= 1.15 ? "met" : "NOT met"));
    }
    if (d != null && s != null) {
      verdict.append(
          f(
              ", Spring Batch %.2f s: D/S %.2f (target <= 1.00: %s)",
              s, d / s, d / s <= 1.0 ? "met" : "NOT met"));
    }
    if (d == null) {
      runs.forEach(
          (system, list) ->
              verdict.append(f("%s %.2f s; ", NAMES.get(system), medians.get(system))));
    }
    return verdict.toString();
  }

  private static double med(List<Run> list, java.util.function.ToDoubleFunction<Run> value) {
    return median(list.stream().map(r -> value.applyAsDouble(r)).toList());
  }

  private static String abbreviate(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max - 1) + "…";
  }

  // ------------------------------------------------------------------------------------------
  // Helpers

  private long queryLong(String sql, long arg) throws SQLException {
    try (PreparedStatement statement = db.prepareStatement(W2Stats.BENCH_MARK + sql)) {
      statement.setLong(1, arg);
      try (ResultSet rs = statement.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  private Instant queryInstant(String sql, long arg) throws SQLException {
    try (PreparedStatement statement = db.prepareStatement(W2Stats.BENCH_MARK + sql)) {
      statement.setLong(1, arg);
      try (ResultSet rs = statement.executeQuery()) {
        Timestamp t = rs.next() ? rs.getTimestamp(1) : null;
        return t == null ? null : t.toInstant();
      }
    }
  }

  private static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }
}
