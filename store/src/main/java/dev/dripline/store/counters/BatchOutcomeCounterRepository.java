package dev.dripline.store.counters;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;

/**
 * Table {@code batch_outcome_counters}: batch outcomes per backfill, sharded (see {@code
 * ShardedCounters}): writers add to the shard of their batch inside the transaction that records
 * the batch's outcome, so each outcome is counted exactly once — a completion in BatchRepository's
 * statement that records it, a failed batch through {@link #addOutcomes}; read summed over the
 * shards.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface BatchOutcomeCounterRepository
    extends GenericRepository<BatchOutcomeCounter, BatchOutcomeCounter.Key> {
  /** Every backfill's count of each outcome it counted, by backfill then outcome. */
  @Query(
      "select backfill, outcome, cast(sum(value) as bigint) as value from batch_outcome_counters"
          + " group by backfill, outcome order by backfill, outcome")
  List<OutcomeCount> totals();

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
