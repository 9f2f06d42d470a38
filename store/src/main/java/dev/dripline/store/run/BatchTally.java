package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * A run's batches that decide whether it can end ({@link BatchRepository#tally}).
 *
 * @param open batches pending or holding a slot (enqueued, running)
 * @param failed batches failed for good
 */
@Introspected
public record BatchTally(long open, long failed) {}
