package dev.dripline.bench;

import dev.dripline.store.db.ShardedCounters;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * W2's diagnostic system B: the JDBC pool (J) with, in each batch's transaction, the bookkeeping
 * statement a chained Dripline batch runs — the completion of the batch (running → completed), the
 * run's key and batch counters, the outcome counter and the claim of the next pending batch — on
 * copies of Dripline's tables ({@code w2_book_*}: same columns, indexes and constraints but foreign
 * keys, so the statement does the same work without touching Dripline's own rows). The planner
 * inserts each batch's row as {@code running} (Dripline inserts it as {@code pending} and a claim
 * makes it running: the same two row versions, one statement fewer); the claims take rows of a
 * pre-filled set of pending batches. B − J is then what the bookkeeping costs the database, D − B
 * what the rest of Dripline (Temporal, the engine's JVM, its start and end) costs.
 */
final class W2Bookkeeping {
  private static final String RUN = "w2_book_runs";
  private static final String BATCHES = "w2_book_batches";
  private static final String KEY_COUNTS = "w2_book_key_counts";
  private static final String OUTCOMES = "w2_book_outcomes";

  /** Pending batches the claims take: numbers above every planned batch's. */
  private static final int CLAIMABLE_FROM = 10_000_000;

  // The statement a chained batch's record was before it became the function
  // dripline_complete_and_claim_next (migration V20), kept here as one SQL text so system B can run
  // it on copies of the tables: the function's statements, inlined, over tables it names.
  private static final String KEYS = "b.start_key_bytes as start_key, b.end_key_bytes as end_key";

  private static final String LEASE =
      "lease_until = now() + :leaseMillis * interval '1 millisecond'";

  private static final String STARTED =
      " returning/**/b.number, " + KEYS + ", b.size, cast(r.options as text) as options";

  private static final String SLOT_SECONDS =
      "cast(extract(epoch from now() - coalesce(b.enqueued_at, b.started_at)) as float8)";

  private static final String CLAIM_NEXT =
      "update/**/batches b set status = 'running', chain_head = :headNumber, claim_token = null,"
          + " holder = :holder, "
          + LEASE
          + ", enqueued_at = now(), started_at = coalesce(b.started_at, now()),"
          + " attempts = b.attempts + 1"
          + " from runs r where r.id = b.run_id and b.run_id = :runId"
          + " and b.number = (select p.number from batches p join runs q on q.id = p.run_id"
          + " where p.run_id = :runId and p.status = 'pending' and q.status = 'running'"
          + " and q.stop_requested_at is null and :lane <= q.max_parallel_batches"
          + " and cardinality(dripline_run_holds("
          + "(select o.backfill from runs o where o.id = :runId))) = 0"
          + " and (select count(*) from batches h where h.run_id = q.id"
          + " and h.status in ('enqueued', 'running')) <= q.max_parallel_batches - ";

  private static final String CLAIM_NEXT_END =
      " order by p.number limit 1 for update/**/of p skip locked)";

  private static final String COMPLETE_CTES =
      "with done as ("
          + " update/**/batches b set status = 'completed', finished_at = now(), error = null,"
          + " lease_until = null"
          + " from runs r where r.id = b.run_id"
          + " and b.run_id = :runId and b.number = :number and b.status = 'running'"
          + " and b.holder = :holder"
          + " returning/**/r.backfill, b.size, "
          + SLOT_SECONDS
          + " as slot_seconds),"
          + " keys as (insert/**/into run_key_counts"
          + " (run_id, shard, processed_keys, completed_batches)"
          + " select :runId, :shard, size, 1 from done"
          + " on conflict (run_id, shard) do update/**/"
          + "set processed_keys = run_key_counts.processed_keys + excluded.processed_keys,"
          + " completed_batches = run_key_counts.completed_batches + 1),"
          + " outcomes as (insert/**/into batch_outcome_counters (backfill, outcome, shard, value)"
          + " select backfill, 'completed', :shard, 1 from done"
          + " on conflict (backfill, outcome, shard) do update/**/"
          + "set value = batch_outcome_counters.value + excluded.value)";

  private static final String RECORD_AND_CLAIM_NEXT_TEXT =
      COMPLETE_CTES
          + ", next as ("
          + CLAIM_NEXT
          + "0"
          + CLAIM_NEXT_END
          + " and exists (select 1 from done)"
          + STARTED
          + ") select d.backfill, d.slot_seconds, n.number, n.start_key, n.end_key, n.size,"
          + " n.options";

  /**
   * {@link #RECORD_AND_CLAIM_NEXT_TEXT} in positional form ({@code ?} for each named parameter, in
   * the same order, the claim's slack a parameter again). Parameters: run, number, holder, run,
   * shard, shard (the completion), chain head, holder, lease millis, run, run, lane, run, slack
   * (the claim).
   */
  private static final String RECORD_AND_CLAIM_NEXT =
      RECORD_AND_CLAIM_NEXT_TEXT
              .replace(
                  "max_parallel_batches - 0" + CLAIM_NEXT_END,
                  "max_parallel_batches - :slack" + CLAIM_NEXT_END)
              .replaceAll(":[A-Za-z]+", "?")
          + " from done d left join next n on true";

  /**
   * Dripline's own statement ({@link #RECORD_AND_CLAIM_NEXT_TEXT}) with its tables renamed to the
   * copies.
   */
  static final String RECORD = record(RUN, BATCHES, KEY_COUNTS, OUTCOMES);

  /**
   * {@link #RECORD_AND_CLAIM_NEXT_TEXT} with Dripline's tables renamed to copies; bind it with
   * {@link #bindRecord}.
   */
  static String record(String runs, String batches, String keyCounts, String outcomes) {
    return RECORD_AND_CLAIM_NEXT
        .replaceAll("\\bbatches\\b", batches)
        .replaceAll("\\bruns\\b", runs)
        .replaceAll("\\brun_key_counts\\b", keyCounts)
        .replaceAll("\\bbatch_outcome_counters\\b", outcomes);
  }

  /**
   * Binds a {@link #record} statement: batch {@code number} of run 1 completes (into its counter
   * shards) and the chain headed by it claims run 1's lowest pending batch in lane 1.
   */
  static void bindRecord(PreparedStatement record, int number) throws SQLException {
    int shard = ShardedCounters.shardOf(number);
    record.setLong(1, 1);
    record.setInt(2, number);
    record.setString(3, HOLDER);
    record.setLong(4, 1);
    record.setInt(5, shard);
    record.setInt(6, shard);
    record.setInt(7, number);
    record.setString(8, HOLDER);
    record.setLong(9, LEASE_MILLIS);
    record.setLong(10, 1);
    record.setLong(11, 1);
    record.setInt(12, 1);
    record.setLong(13, 1);
    record.setInt(14, 0);
  }

  /** The slot holder the bench's batches are recorded under (Dripline's are batch attempts). */
  static final String HOLDER = "w2-bench";

  private static final long LEASE_MILLIS = 30_000;

  private W2Bookkeeping() {}

  /**
   * Creates the copies when missing and resets them for a run in batches of {@code batchSize}: one
   * run row (copied from Dripline's latest run), a pending row to claim for every batch there can
   * be ({@code example_users}' row estimate, which the reset's ANALYZE set, over the batch size).
   */
  static void prepare(Connection connection, int batchSize) throws SQLException {
    long batches;
    try (Statement statement = connection.createStatement();
        ResultSet rs =
            statement.executeQuery(
                "select reltuples::bigint from pg_class where relname = 'example_users'")) {
      rs.next();
      batches = Math.max(0, rs.getLong(1)) / batchSize + 64;
    }
    try (Statement statement = connection.createStatement()) {
      // Made anew: copies made before a migration would lack its columns.
      statement.execute(
          "drop table if exists " + RUN + ", " + BATCHES + ", " + KEY_COUNTS + ", " + OUTCOMES);
      createCopies(statement, RUN, BATCHES, KEY_COUNTS, OUTCOMES);
      int copied =
          statement.executeUpdate(
              "insert into " + RUN + " select * from runs order by id desc limit 1");
      if (copied != 1) {
        throw new IllegalStateException(
            "W2 system B copies a run row of Dripline's: run D (or its warm-up) first");
      }
      statement.execute(
          "update "
              + RUN
              + " set id = 1, status = 'running', stop_requested_at = null,"
              + " max_parallel_batches = 1000");
      statement.execute(
          "insert into "
              + BATCHES
              + " (run_id, number, start_key_bytes, end_key_bytes, size, status)"
              + " select 1, n, dripline_bigint_key(n), dripline_bigint_key(n), 1, 'pending'"
              + " from generate_series("
              + CLAIMABLE_FROM
              + ", "
              + (CLAIMABLE_FROM + batches)
              + ") n");
      statement.execute("vacuum (analyze) " + RUN + ", " + BATCHES);
    }
  }

  /**
   * Creates, when missing, copies of the four tables {@link #record} writes: the same columns,
   * indexes and constraints, no foreign keys. A copy made before a migration changed its table's
   * columns is made again.
   */
  static void createCopies(
      Statement statement, String runs, String batches, String keyCounts, String outcomes)
      throws SQLException {
    copy(statement, runs, "runs");
    copy(statement, batches, "batches");
    copy(statement, keyCounts, "run_key_counts");
    copy(statement, outcomes, "batch_outcome_counters");
  }

  private static void copy(Statement statement, String copy, String table) throws SQLException {
    statement.execute(
        "do $$ begin if exists (select 1 from information_schema.columns where table_name = '"
            + copy
            + "') and (select array_agg(column_name::text order by column_name::text)"
            + " from information_schema.columns where table_name = '"
            + copy
            + "') is distinct from (select array_agg(column_name::text order by column_name::text)"
            + " from information_schema.columns where table_name = '"
            + table
            + "') then execute 'drop table "
            + copy
            + "'; end if; end $$");
    statement.execute("create table if not exists " + copy + " (like " + table + " including all)");
  }

  /** The planner's part: the batch's row, running (auto-commit). */
  static void planned(Connection connection, int number, W2Ranges.Range range) throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement(
            "insert into "
                + BATCHES
                + " (run_id, number, start_key_bytes, end_key_bytes, size, status, enqueued_at,"
                + " started_at, holder, lease_until)"
                + " values (1, ?, dripline_bigint_key(?), dripline_bigint_key(?), 1000, 'running',"
                + " now(), now(), '"
                + HOLDER
                + "', now() + interval '30 seconds')")) {
      insert.setInt(1, number);
      insert.setLong(2, range.start().getLong(0));
      insert.setLong(3, range.end().getLong(0));
      insert.executeUpdate();
    }
  }

  /** The batch's record, inside its transaction. */
  static void record(Connection transaction, int number) throws SQLException {
    try (PreparedStatement record = transaction.prepareStatement(RECORD)) {
      bindRecord(record, number);
      record.executeQuery().close();
    }
  }
}
