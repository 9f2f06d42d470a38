package dev.dripline.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The UI workload's data, written with SQL in a few statements ({@code generate_series}): {@code
 * runs} runs of four backfills and every status, the big run ({@link #bigRunId}) with {@code
 * bigBatches} batches (completed, failed with an error, running, pending), the others with {@code
 * runBatches} each (none while pending), the counters the pages read as the engine keeps them (the
 * runs' triggers make their {@code run_key_counts} and pick cursor rows, the batches' triggers
 * their slot holders and cursors; the completed batches and processed keys are summed into the
 * shards), audit events and targets; then {@code VACUUM ANALYZE}.
 */
final class UiSeed {
  /** The backfills the seed publishes; the last one has 2 % of the runs. */
  static final String[] BACKFILLS = {
    "bench.ui-alpha", "bench.ui-beta", "bench.ui-gamma", "bench.ui-delta"
  };

  private final BenchConfig config;
  private final int runs;
  private final int bigBatches;
  private final int runBatches;
  private final int targets;

  UiSeed(BenchConfig config, int runs, int bigBatches, int runBatches, int targets) {
    this.config = config;
    this.runs = runs;
    this.bigBatches = bigBatches;
    this.runBatches = runBatches;
    this.targets = targets;
  }

  /** The big run: ten below the newest, so it is on neither end of the list. */
  long bigRunId() {
    return Math.max(1, runs - 10);
  }

  /**
   * Whether the database holds this seed already (the same run and batch counts, the big run's
   * progress samples).
   */
  boolean present(Services services) {
    return services.queryLong("select count(*) from runs") == runs
        && services.queryLong("select count(*) from batches where run_id = ?", bigRunId())
            == bigBatches
        && services.queryLong(
                "select count(*) from run_progress_samples where run_id = ?", bigRunId())
            > 0;
  }

  /** Writes the seed; returns the seconds it took. */
  double write() throws SQLException {
    long started = System.nanoTime();
    try (Connection c =
            DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      for (String sql : statements()) {
        long t = System.nanoTime();
        int rows = s.execute(sql) ? 1 : s.getUpdateCount();
        System.out.println(
            BenchMain.f(
                "  seed %6.1f s  %,10d rows  %s",
                (System.nanoTime() - t) / 1e9, rows, abbreviated(sql)));
      }
      c.commit();
      c.setAutoCommit(true);
      long t = System.nanoTime();
      s.execute(
          "vacuum (analyze) runs, batches, run_key_counts, run_pick_cursors, audit_events, targets,"
              + " backfill_definitions, run_progress_samples");
      System.out.println(
          BenchMain.f("  seed %6.1f s  vacuum (analyze)", (System.nanoTime() - t) / 1e9));
    }
    return (System.nanoTime() - started) / 1e9;
  }

  private static String abbreviated(String sql) {
    String line = sql.strip().replaceAll("\\s+", " ");
    return line.length() <= 90 ? line : line.substring(0, 87) + "...";
  }

  private String[] statements() {
    long big = bigRunId();
    int pendingFrom = bigBatches - Math.max(1, bigBatches / 100) + 1;
    int runningFrom = Math.max(1, pendingFrom - 8);
    String status =
        "case when g = "
            + big
            + " then 'running' when g % 100 = 1 then 'running' when g % 100 = 2 then 'paused'"
            + " when g % 100 = 3 then 'pending' when g % 10 = 4 then 'failed'"
            + " when g % 10 = 5 then 'stopped' else 'completed' end";
    String backfill =
        "case when g % 50 < 25 then 'bench.ui-alpha' when g % 50 < 40 then 'bench.ui-beta'"
            + " when g % 50 < 49 then 'bench.ui-gamma' else 'bench.ui-delta' end";
    String error =
        "'java.lang.IllegalStateException: bench failure at key ' || n"
            + " || repeat(E'\\n\\tat dev.dripline.bench.UiFrame.call(UiFrame.java:42)', 6)";
    return new String[] {
      "truncate runs, batches, run_purges, run_key_counts, run_pick_cursors, audit_events,"
          + " targets cascade",
      "select setval(pg_get_serial_sequence('runs', 'id'), " + runs + ")",
      """
      insert into backfill_definitions (name, description, options_schema, default_batch_size, key)
      select n, 'UI bench definition', '[{"min": 0, "name": "items", "type": "integer",
        "required": true, "description": "Keys (1..items)."}, {"name": "mode", "type": "enum",
        "allowedValues": ["fast", "slow"], "required": false, "defaultValue": "fast",
        "description": "A choice."}]', 100, '[{"name": "id", "type": "bigint"}]'
      from unnest(cast(array['bench.ui-alpha', 'bench.ui-beta', 'bench.ui-gamma',
        'bench.ui-delta'] as text[])) n
      on conflict (name) do nothing
      """,
      // The runs; the triggers add their counter shards and pick cursors.
      "insert into runs (id, backfill, options, options_key, batch_size, max_parallel_batches,"
          + " requested_max_parallel_batches, created_by, status, error, workflow_id, plan_done,"
          + " next_batch_number, planned_keys, total_keys, created_at, updated_at, started_at,"
          + " finished_at, max_failed_batches_percent)"
          + " select g, "
          + backfill
          + ", jsonb_build_object('items', nb * 100), '{\"items\":' || g || '}', 100, 8, 8,"
          + " 'operator', st, case when st = 'failed' then 'a batch failed its last attempt' end,"
          + " 'dripline-run-' || g, st <> 'pending', nb + 1, nb * 100, nb * 100,"
          + " now() - ("
          + runs
          + " - g) * interval '1 minute', now() - ("
          + runs
          + " - g) * interval '1 minute' + interval '10 minutes',"
          + " case when st <> 'pending' then now() - ("
          + runs
          + " - g) * interval '1 minute' + interval '1 second' end,"
          + " case when st in ('completed', 'failed', 'stopped') then now() - ("
          + runs
          + " - g) * interval '1 minute' + interval '10 minutes' end,"
          + " case when g % 3 = 0 then 5 end"
          + " from (select g, "
          + status
          + " as st, case when g = "
          + big
          + " then "
          + bigBatches
          + " when "
          + status
          + " = 'pending' then 0 else "
          + runBatches
          + " end as nb"
          + " from generate_series(1, "
          + runs
          + ") g) r",
      // The other runs' batches: as far as their status says.
      "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status,"
          + " attempts, error, started_at, finished_at)"
          + " select r.id, n, dripline_bigint_key((n - 1) * 100 + 1), dripline_bigint_key(n * 100),"
          + " 100, b.st, case when b.st = 'pending'"
          + " then 0 when b.st = 'failed' then 3 else 1 end, case when b.st = 'failed' then "
          + error
          + " end, case when b.st <> 'pending' then r.started_at + n * interval '1 second' end,"
          + " case when b.st in ('completed', 'failed', 'stopped') then r.started_at + n *"
          + " interval '1 second' + interval '500 milliseconds' end"
          + " from runs r cross join lateral generate_series(1, "
          + runBatches
          + ") n"
          + " cross join lateral (select case"
          + " when r.status = 'completed' then 'completed'"
          + " when r.status = 'failed' then case when n = "
          + runBatches
          + " then 'failed' else 'completed' end"
          + " when r.status = 'stopped' then case when n <= "
          + runBatches / 2
          + " then 'completed' else 'stopped' end"
          + " when r.status = 'running' then case when n <= "
          + runBatches / 2
          + " then 'completed' when n = "
          + runBatches / 2
          + " + 1 then 'running' else 'pending' end"
          + " else case when n <= "
          + runBatches / 2
          + " then 'completed' else 'pending' end"
          + " end as st) b"
          + " where r.id <> "
          + big
          + " and r.status <> 'pending'",
      // The big run's batches: completed (one in 101 failed with an error), 8 running, 1 % pending.
      "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status,"
          + " attempts, error, started_at, finished_at)"
          + " select "
          + big
          + ", n, dripline_bigint_key((n - 1) * 100 + 1), dripline_bigint_key(n * 100), 100, st, case when st = 'pending'"
          + " then 0 when st = 'failed' then 3 else 1 end, case when st = 'failed' then "
          + error
          + " end, case when st <> 'pending' then r.started_at + n * interval '2 milliseconds' end,"
          + " case when st in ('completed', 'failed') then r.started_at + n"
          + " * interval '2 milliseconds' + interval '1 millisecond' end"
          + " from runs r cross join lateral generate_series(1, "
          + bigBatches
          + ") n"
          + " cross join lateral (select case when n >= "
          + pendingFrom
          + " then 'pending'"
          + " when n >= "
          + runningFrom
          + " then 'running' when n % 101 = 0 then 'failed'"
          + " else 'completed' end as st) b"
          + " where r.id = "
          + big,
      // The counters the engine keeps per completed batch: a batch's shard is its number's.
      "update run_key_counts k set completed_batches = c.batches, processed_keys = c.keys"
          + " from (select run_id, number % 16 as shard, count(*) as batches, sum(size) as keys"
          + " from batches where status = 'completed' group by 1, 2) c"
          + " where k.run_id = c.run_id and k.shard = c.shard",
      // The big run began 30 days ago; the workers sampled its progress every 10 s since, its keys
      // growing evenly to its count (259,200 samples).
      "update runs set started_at = now() - interval '30 days' where id = " + big,
      "insert into run_progress_samples (run_id, sampled_at, processed_keys, completed_batches)"
          + " select "
          + big
          + ", to_timestamp(floor(extract(epoch from now() - interval '30 days') / 10) * 10)"
          + " + s * interval '10 seconds', k.keys * s / 259200, k.batches * s / 259200"
          + " from generate_series(1, 259199) s, (select sum(processed_keys) as keys,"
          + " sum(completed_batches) as batches from run_key_counts where run_id = "
          + big
          + ") k",
      // Audit: an action on every run, twenty on the big one.
      "insert into audit_events (at, actor, action, run_id, outcome, status)"
          + " select r.created_at + interval '2 minutes', 'operator', 'run.cap', r.id, 'accepted',"
          + " 200 from runs r order by r.id",
      "insert into audit_events (at, actor, action, run_id, detail, outcome, status, problem)"
          + " select now() - (20 - i) * interval '1 minute', 'operator',"
          + " case when i % 2 = 0 then 'run.pause' else 'run.resume' end, "
          + big
          + ", null, case when i % 5 = 0 then 'rejected' else 'accepted' end,"
          + " case when i % 5 = 0 then 409 else 202 end,"
          + " case when i % 5 = 0 then 'run is not running' end from generate_series(1, 20) i",
      // Targets: every fifth failing, with a streak and an error.
      "insert into targets (name, backfill, options, state, consecutive_failures,"
          + " first_failed_at, last_error, last_attempt_at, next_attempt_at)"
          + " select 'bench-target-' || lpad(i::text, 5, '0'), 'bench.ui-alpha',"
          + " jsonb_build_object('items', i), case when i % 7 = 0 then 'pending_backfill'"
          + " when i % 11 = 0 then 'needs_resync' else 'primed' end,"
          + " case when i % 5 = 0 then i % 9 + 1 else 0 end,"
          + " case when i % 5 = 0 then now() - interval '1 hour' end,"
          + " case when i % 5 = 0 then 'connection refused' end, now() - interval '5 minutes',"
          + " case when i % 5 = 0 then now() + interval '5 minutes' end"
          + " from generate_series(1, "
          + targets
          + ") i"
    };
  }
}
