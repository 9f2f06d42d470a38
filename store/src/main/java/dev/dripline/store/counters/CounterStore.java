package dev.dripline.store.counters;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;

/**
 * Table {@code batch_outcome_counters}, sharded (see {@code ShardedCounters}): writers add to the
 * shard of their batch inside the transaction that records the batch's outcome, so each outcome is
 * counted exactly once. A completion adds to it in BatchStore's statement that records it; a failed
 * batch through {@link #addOutcomes}.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface CounterStore
    extends GenericRepository<BatchOutcomeCounter, BatchOutcomeCounter.Key> {
  /**
   * Adds {@code count} batches to backfill {@code backfill}'s counter of {@code outcome}, in shard
   * {@code shard}, in the caller's transaction. Call it once the transaction holds every other lock
   * it needs: counter rows are shared by all runs of a backfill, so they are held briefly and never
   * while waiting for another lock (no lock-order cycle).
   */
  @Query(
      "insert into batch_outcome_counters (backfill, outcome, shard, value)"
          + " values (:backfill, :outcome, :shard, :count)"
          + " on conflict (backfill, outcome, shard)"
          + " do update set value = batch_outcome_counters.value + excluded.value")
  int addOutcomes(String backfill, String outcome, int shard, long count);
}
