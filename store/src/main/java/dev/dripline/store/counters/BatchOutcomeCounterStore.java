package dev.dripline.store.counters;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;

/**
 * Table {@code batch_outcome_counters}: batch outcomes per backfill, sharded (the batches' writers
 * add to their shard, see {@code ShardedCounters}); read summed over the shards.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface BatchOutcomeCounterStore
    extends GenericRepository<BatchOutcomeCounter, BatchOutcomeCounter.Key> {
  /** Every backfill's count of each outcome it counted, by backfill then outcome. */
  @Query(
      "select backfill, outcome, cast(sum(value) as bigint) as value from batch_outcome_counters"
          + " group by backfill, outcome order by backfill, outcome")
  List<OutcomeCount> totals();
}
