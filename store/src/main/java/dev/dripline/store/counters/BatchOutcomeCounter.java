package dev.dripline.store.counters;

import io.micronaut.data.annotation.Embeddable;
import io.micronaut.data.annotation.EmbeddedId;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.MappedProperty;

/**
 * A row of {@code batch_outcome_counters}: one shard of the count of a backfill's batches that
 * ended with one outcome (completed, failed or stopped). The sum over the shards is the count.
 *
 * @param key backfill, outcome and shard
 * @param value this shard's part of the count
 */
@MappedEntity("batch_outcome_counters")
public record BatchOutcomeCounter(@EmbeddedId Key key, long value) {
  /**
   * The key of a shard.
   *
   * @param backfill the definition's name
   * @param outcome completed, failed or stopped
   * @param shard the shard number
   */
  @Embeddable
  public record Key(
      @MappedProperty("backfill") String backfill,
      @MappedProperty("outcome") String outcome,
      @MappedProperty("shard") short shard) {}
}
