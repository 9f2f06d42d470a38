package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * A run's last completed batches, as the moving average of batch-size tuning reads them ({@link
 * BatchRepository#recentBatches}).
 *
 * @param batches how many there were (at most the number asked for)
 * @param keys their keys, summed
 * @param millis the time each held its slot (claim to completion), summed, in milliseconds
 */
@Introspected
public record RecentBatches(long batches, long keys, double millis) {
  /** No batch completed yet. */
  public static final RecentBatches NONE = new RecentBatches(0, 0, 0);
}
