package dev.dripline.bench;

import dev.dripline.db.ShardedCounters;
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
 *
 * <p>The statement mirrors {@code BatchExecution}'s {@code COMPLETE_CTES} and {@code CLAIM_NEXT}
 * with the table names changed; keep them in step.
 */
final class W2Bookkeeping {
  private static final String RUN = "w2_book_runs";
  private static final String BATCHES = "w2_book_batches";

  /** Pending batches the claims take: numbers above every planned batch's. */
  private static final int CLAIMABLE_FROM = 10_000_000;

  static final String RECORD =
      "with done as ("
          + " update w2_book_batches b set status = 'completed', finished_at = now(), error = null"
          + " from w2_book_runs r where r.id = b.run_id"
          + " and b.run_id = ? and b.number = ? and b.status = 'running'"
          + " returning r.backfill, b.size,"
          + " extract(epoch from now() - coalesce(b.enqueued_at, b.started_at))::float8"
          + " as slot_seconds),"
          + " keys as (insert into w2_book_key_counts"
          + " (run_id, shard, processed_keys, completed_batches)"
          + " select ?, ?, size, 1 from done"
          + " on conflict (run_id, shard) do update"
          + " set processed_keys = w2_book_key_counts.processed_keys + excluded.processed_keys,"
          + " completed_batches = w2_book_key_counts.completed_batches + 1),"
          + " outcomes as (insert into w2_book_outcomes (backfill, outcome, shard, value)"
          + " select backfill, 'completed', ?, 1 from done"
          + " on conflict (backfill, outcome, shard) do update"
          + " set value = w2_book_outcomes.value + excluded.value),"
          + " next as (update w2_book_batches b set status = 'running', chain_head = ?,"
          + " claim_token = null, enqueued_at = now(), started_at = coalesce(b.started_at, now()),"
          + " attempts = b.attempts + 1"
          + " from w2_book_runs r where r.id = b.run_id and b.run_id = ?"
          + " and b.number = (select p.number from w2_book_batches p"
          + " join w2_book_runs q on q.id = p.run_id"
          + " where p.run_id = ? and p.status = 'pending' and q.status = 'running'"
          + " and q.stop_requested_at is null and ? <= q.max_parallel_batches"
          + " order by p.number limit 1 for update of p skip locked)"
          + " and exists (select 1 from done)"
          + " returning b.number, b.start_key, b.end_key, b.size, r.options::text as options)"
          + " select d.backfill, d.slot_seconds, n.number, n.start_key, n.end_key, n.size,"
          + " n.options from done d left join next n on true";

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
      statement.execute("create table if not exists " + RUN + " (like runs including all)");
      statement.execute("create table if not exists " + BATCHES + " (like batches including all)");
      statement.execute(
          "create table if not exists w2_book_key_counts (like run_key_counts including all)");
      statement.execute(
          "create table if not exists w2_book_outcomes (like batch_outcome_counters including all)");
      statement.execute(
          "truncate " + RUN + ", " + BATCHES + ", w2_book_key_counts, w2_book_outcomes");
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
              + " (run_id, number, start_key, end_key, size, status)"
              + " select 1, n, n, n, 1, 'pending' from generate_series("
              + CLAIMABLE_FROM
              + ", "
              + (CLAIMABLE_FROM + batches)
              + ") n");
      statement.execute("vacuum (analyze) " + RUN + ", " + BATCHES);
    }
  }

  /** The planner's part: the batch's row, running (auto-commit). */
  static void planned(Connection connection, int number, W2Ranges.Range range) throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement(
            "insert into "
                + BATCHES
                + " (run_id, number, start_key, end_key, size, status, enqueued_at, started_at)"
                + " values (1, ?, ?, ?, 1000, 'running', now(), now())")) {
      insert.setInt(1, number);
      insert.setLong(2, range.start());
      insert.setLong(3, range.end());
      insert.executeUpdate();
    }
  }

  /** The batch's record, inside its transaction. */
  static void record(Connection transaction, int number) throws SQLException {
    try (PreparedStatement record = transaction.prepareStatement(RECORD)) {
      int shard = ShardedCounters.shardOf(number);
      record.setLong(1, 1);
      record.setInt(2, number);
      record.setLong(3, 1);
      record.setInt(4, shard);
      record.setInt(5, shard);
      record.setInt(6, number);
      record.setLong(7, 1);
      record.setLong(8, 1);
      record.setInt(9, 1);
      record.executeQuery().close();
    }
  }
}
