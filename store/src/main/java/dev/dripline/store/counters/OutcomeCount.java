package dev.dripline.store.counters;

import io.micronaut.core.annotation.Introspected;

/**
 * A backfill's batches that ended with one outcome, summed over the counter's shards.
 *
 * @param backfill the definition's name
 * @param outcome completed, failed or stopped
 * @param value how many
 */
@Introspected
public record OutcomeCount(String backfill, String outcome, long value) {}
