package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;
import static dev.dripline.bench.BenchMain.median;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * RC: what the statement a chained Dripline batch records itself with ({@link
 * dev.dripline.bench.W2Bookkeeping#RECORD}: completion, counters, the claim of the next batch)
 * costs PostgreSQL on its own, measured as the CPU time of the backend that runs it ({@code
 * /proc/<pid>/stat}; PostgreSQL must run on this host), not as wall time on a busy machine.
 *
 * <p>On copies of Dripline's tables ({@code rc_*}: same columns, indexes and constraints, no
 * foreign keys): {@code rc-history} completed batches of another run (a deployment's history), then
 * one chain that completes and claims {@code rc-statements} batches of one run, one statement per
 * batch in auto-commit (a commit each). Printed per chunk of {@code rc-chunk} statements: CPU and
 * wall time per statement, WAL bytes per statement. Three passes, alternating ({@link Vacuum}): no
 * vacuum during the chain (autovacuum off for the copy: as when its 20 % threshold of a large
 * {@code batches} is far away), a {@code VACUUM} of the batches copy after every chunk (on another
 * connection, not counted), and autovacuum with the settings migration V9 gives {@code batches}
 * ({@link #RECOMMENDED}; when it runs is the server's: {@code autovacuum_naptime}).
 *
 * <p>Options: {@code --rc-statements} (60000), {@code --rc-history} (1000000), {@code --rc-chunk}
 * (10000), {@code --reps} rounds of the three passes.
 */
final class RecordCost {
  private static final String RUNS = "rc_runs";
  private static final String BATCHES = "rc_batches";
  private static final String KEY_COUNTS = "rc_key_counts";
  private static final String OUTCOMES = "rc_outcomes";

  private final BenchConfig config;
  private final int statements;
  private final int history;
  private final int chunk;

  RecordCost(BenchConfig config) {
    this.config = config;
    this.statements = config.intOption("rc-statements", 60_000);
    this.history = config.intOption("rc-history", 1_000_000);
    this.chunk = config.intOption("rc-chunk", 10_000);
    if (statements < 1 || history < 0 || chunk < 1 || chunk > statements) {
      throw new IllegalArgumentException(
          "--rc-statements and --rc-chunk must be at least 1, the chunk no larger; --rc-history"
              + " at least 0");
    }
  }

  /**
   * The autovacuum settings migration V9 gives {@code batches} (docs/operations.md, "Vacuuming
   * batches"); set on the copy explicitly, as {@code like … including all} does not copy them.
   */
  static final String RECOMMENDED =
      "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000";

  /** What vacuums the batches copy while the chain runs, and the copy's storage parameters. */
  enum Vacuum {
    NONE("no-vacuum", "autovacuum_enabled = false"),
    EVERY_CHUNK("vacuum", "autovacuum_enabled = false"),
    AUTOVACUUM("autovacuum", RECOMMENDED);

    final String label;
    final String storage;

    Vacuum(String label, String storage) {
      this.label = label;
      this.storage = storage;
    }
  }

  /** One pass: CPU ms, wall ms and WAL bytes per statement, per chunk. */
  private record Pass(
      Vacuum vacuum, List<Double> cpuMs, List<Double> wallMs, List<Double> wal, long vacuums) {}

  String run() throws Exception {
    System.out.println();
    System.out.println(
        f(
            "== RC the record statement alone: %,d statements (one chain, auto-commit) over %,d"
                + " completed batches of history, chunks of %,d; %d reps of: no vacuum, vacuum"
                + " after every chunk, autovacuum with (%s)",
            statements, history, chunk, config.reps(), RECOMMENDED));
    List<Pass> passes = new ArrayList<>();
    for (int rep = 1; rep <= config.reps(); rep++) {
      for (Vacuum vacuum : Vacuum.values()) {
        Pass pass = pass(vacuum);
        passes.add(pass);
        System.out.println(
            f(
                "rep %d %-10s cpu ms/stmt per chunk %s; wall ms/stmt %s; WAL B/stmt %.0f;"
                    + " vacuums of the copy %d",
                rep,
                vacuum.label,
                join(pass.cpuMs()),
                join(pass.wallMs()),
                median(pass.wal()),
                pass.vacuums()));
      }
    }
    return f(
        "record statement: %.3f CPU ms in the first chunk; in the last, %.3f without vacuum, %.3f"
            + " with a vacuum after every chunk, %.3f with the recommended autovacuum (medians over"
            + " %d reps)",
        medianOf(passes, Vacuum.NONE, 0),
        medianOf(passes, Vacuum.NONE, -1),
        medianOf(passes, Vacuum.EVERY_CHUNK, -1),
        medianOf(passes, Vacuum.AUTOVACUUM, -1),
        config.reps());
  }

  private static double medianOf(List<Pass> passes, Vacuum vacuum, int chunkIndex) {
    List<Double> values = new ArrayList<>();
    for (Pass pass : passes) {
      if (pass.vacuum() == vacuum) {
        List<Double> cpu = pass.cpuMs();
        values.add(cpu.get(chunkIndex < 0 ? cpu.size() - 1 : chunkIndex));
      }
    }
    return median(values);
  }

  private Pass pass(Vacuum vacuum) throws Exception {
    try (Connection connection = connect();
        Connection vacuumer = connect()) {
      prepare(connection, vacuum);
      long pid = backendPid(connection);
      if (CpuMeter.cpuSeconds(pid) < 0) {
        throw new IllegalStateException(
            "RC reads the CPU time of PostgreSQL's backend from /proc: PostgreSQL must run on this"
                + " host");
      }
      List<Double> cpuMs = new ArrayList<>();
      List<Double> wallMs = new ArrayList<>();
      List<Double> wal = new ArrayList<>();
      int number = firstClaim(connection);
      try (PreparedStatement record =
          connection.prepareStatement(W2Bookkeeping.record(RUNS, BATCHES, KEY_COUNTS, OUTCOMES))) {
        int done = 0;
        while (done + chunk <= statements) {
          double cpuBefore = CpuMeter.cpuSeconds(pid);
          long walBefore = walBytes(vacuumer);
          long start = System.nanoTime();
          for (int i = 0; i < chunk; i++) {
            W2Bookkeeping.bindRecord(record, number);
            try (ResultSet rs = record.executeQuery()) {
              if (!rs.next() || rs.getObject("number") == null) {
                throw new IllegalStateException("RC: batch " + number + " was not recorded");
              }
              number = rs.getInt("number");
            }
          }
          long wall = System.nanoTime() - start;
          cpuMs.add((CpuMeter.cpuSeconds(pid) - cpuBefore) * 1000.0 / chunk);
          wallMs.add(wall / 1e6 / chunk);
          wal.add((walBytes(vacuumer) - walBefore) / (double) chunk);
          done += chunk;
          if (vacuum == Vacuum.EVERY_CHUNK) {
            try (Statement statement = vacuumer.createStatement()) {
              statement.execute("vacuum " + BATCHES);
            }
          }
        }
      }
      return new Pass(vacuum, cpuMs, wallMs, wal, vacuums(vacuumer));
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
  }

  /**
   * Fresh copies: one running run (id 1), {@code history} completed batches of run 0, and a pending
   * batch of run 1 for every statement (and a few more); vacuumed, analysed, checkpointed.
   */
  private void prepare(Connection connection, Vacuum vacuum) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "drop table if exists " + String.join(", ", RUNS, BATCHES, KEY_COUNTS, OUTCOMES));
      W2Bookkeeping.createCopies(statement, RUNS, BATCHES, KEY_COUNTS, OUTCOMES);
      statement.execute(
          "insert into "
              + RUNS
              + " (id, backfill, options, options_key, batch_size, max_parallel_batches, status)"
              + " values (1, 'bench.record-cost', '{}', '{}', 1000, 1000, 'running')");
      statement.execute(
          "insert into "
              + BATCHES
              + " (run_id, number, start_key_bytes, end_key_bytes, size, status, attempts,"
              + " started_at, finished_at) select 0, n, dripline_bigint_key(n),"
              + " dripline_bigint_key(n), 1000, 'completed', 1, now(), now()"
              + " from generate_series(1, "
              + history
              + ") n");
      statement.execute(
          "insert into "
              + BATCHES
              + " (run_id, number, start_key_bytes, end_key_bytes, size, status)"
              + " select 1, n, dripline_bigint_key(n), dripline_bigint_key(n), 1000, 'pending'"
              + " from generate_series(1, "
              + (statements + chunk + 10)
              + ") n");
      statement.execute("alter table " + BATCHES + " set (" + vacuum.storage + ")");
      statement.execute("vacuum (analyze) " + RUNS + ", " + BATCHES);
      try {
        statement.execute("checkpoint");
      } catch (SQLException e) {
        // not permitted for this role: the first chunk then shares the WAL with the fill's pages
      }
    }
  }

  /** The chain's head: run 1's first batch, claimed as a chain claims one. */
  private static int firstClaim(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.executeUpdate(
          "update "
              + BATCHES
              + " set status = 'running', chain_head = 1, enqueued_at = now(), started_at = now(),"
              + " attempts = 1, holder = '"
              + W2Bookkeeping.HOLDER
              + "' where run_id = 1 and number = 1");
    }
    return 1;
  }

  private static long backendPid(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery("select pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * Vacuums of the batches copy since it was created, by hand and by autovacuum (the statistics lag
   * by up to a second; the first, before the chain, counts too).
   */
  private static long vacuums(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "select vacuum_count + autovacuum_count from pg_stat_user_tables"
                    + " where relname = '"
                    + BATCHES
                    + "'")) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  private static long walBytes(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery("select (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String join(List<Double> values) {
    List<String> parts = new ArrayList<>();
    for (double v : values) {
      parts.add(f("%.3f", v));
    }
    return String.join(" ", parts);
  }
}
