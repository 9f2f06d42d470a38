package dev.dripline.store.db;

/**
 * Counters spread over {@link #SHARDS} rows so that concurrent batch completions do not queue on
 * one row lock (migration V5): a run's processed keys, completed batches and slot holders ({@code
 * run_key_counts}) and each backfill's batch outcomes ({@code batch_outcome_counters}); readers sum
 * the shards. A run's rows exist from its insert on, and its writers add to the row of their
 * transaction's shard ({@code dripline_session_shard()}: a completion's batch's {@link #shardOf},
 * migration V26, else the backend pid's), so a transaction writes one row of them; outcomes go to
 * the shard of their batch. A completion writes both counters in the same statement as its
 * compare-and-set ({@code BatchRepository.complete}); a failed or stopped batch's outcome goes
 * through {@code BatchOutcomeCounterRepository.addOutcomes}.
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

  /** The shard of batch {@code number}: of its outcome in {@code batch_outcome_counters}. */
  public static int shardOf(int number) {
    return Math.floorMod(number, SHARDS);
  }
}
