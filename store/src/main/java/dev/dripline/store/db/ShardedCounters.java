package dev.dripline.store.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Counters spread over {@link #SHARDS} rows so that concurrent batch completions do not queue on
 * one row lock (migration V5): a run's processed keys ({@code run_key_counts}) and each backfill's
 * batch outcomes ({@code batch_outcome_counters}). Writers add to the shard of their batch inside
 * the transaction that records the batch's outcome; readers sum the shards. A completion writes
 * both counters in the same statement as its compare-and-set ({@code BatchStore.complete}); a
 * failed batch's outcome goes through {@code BatchOutcomeCounterStore.addOutcomes}, a stopped one's
 * (still) through {@link #addOutcomes}.
 */
public final class ShardedCounters {
  /** Shards per counter: enough that a cap of 50 rarely puts two completions on one row. */
  public static final int SHARDS = 16;

  /**
   * SQL expression of a run's processed keys, for a query over {@code runs r}: the sum of its
   * shards, 0 before any batch completed.
   */
  public static final String PROCESSED_KEYS_OF_R =
      "(select coalesce(sum(k.processed_keys), 0)::bigint from run_key_counts k"
          + " where k.run_id = r.id)";

  private ShardedCounters() {}

  /** The shard of batch {@code number}. */
  public static int shardOf(int number) {
    return Math.floorMod(number, SHARDS);
  }

  /**
   * Adds {@code count} batches to a backfill's outcome counter, in the caller's transaction; {@code
   * BatchOutcomeCounterStore.addOutcomes} on a JDBC connection, for callers not yet on the
   * repository.
   */
  public static void addOutcomes(
      Connection connection, String backfill, String outcome, int shard, long count)
      throws SQLException {
    if (count <= 0) {
      return;
    }
    try (PreparedStatement upsert =
        connection.prepareStatement(
            "insert into batch_outcome_counters (backfill, outcome, shard, value)"
                + " values (?, ?, ?, ?)"
                + " on conflict (backfill, outcome, shard)"
                + " do update set value = batch_outcome_counters.value + excluded.value")) {
      upsert.setString(1, backfill);
      upsert.setString(2, outcome);
      upsert.setInt(3, shard);
      upsert.setLong(4, count);
      upsert.executeUpdate();
    }
  }
}
