package dev.dripline.store.run;

import io.micronaut.data.annotation.Embeddable;
import io.micronaut.data.annotation.EmbeddedId;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.MappedProperty;
import java.time.Instant;

/**
 * A row of {@code run_progress_samples}: a running run's processed keys and completed batches at
 * the start of one sampling interval ({@link ProgressSampleRepository#sample}).
 *
 * @param key the run and the interval's start
 * @param processedKeys the run's processed keys then (the sum of its counter shards)
 * @param completedBatches the run's completed batches then
 */
@MappedEntity("run_progress_samples")
public record ProgressSample(@EmbeddedId Key key, long processedKeys, long completedBatches) {
  /**
   * @param runId the run
   * @param sampledAt the start of the sampling interval, a multiple of it since the epoch
   */
  @Embeddable
  public record Key(
      @MappedProperty("run_id") long runId, @MappedProperty("sampled_at") Instant sampledAt) {}
}
