package dev.dripline.store.counters;

import io.micronaut.data.annotation.Embeddable;
import io.micronaut.data.annotation.EmbeddedId;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.MappedProperty;

/**
 * A row of {@code batch_outcome_counters}: one shard of a backfill's count of batches that ended
 * with one outcome ({@code dripline_batches_finished_total}); readers sum the shards.
 *
 * @param key the backfill, outcome and shard
 * @param value batches counted in this shard
 */
@MappedEntity("batch_outcome_counters")
public record BatchOutcomeCounter(@EmbeddedId Key key, long value) {
  /**
   * @param backfill the definition's name
   * @param outcome {@code completed}, {@code failed} or {@code stopped}
   * @param shard the shard, from the batch's number ({@code ShardedCounters.shardOf})
   */
  @Embeddable
  public record Key(
      @MappedProperty("backfill") String backfill,
      @MappedProperty("outcome") String outcome,
      @MappedProperty("shard") short shard) {}
}
