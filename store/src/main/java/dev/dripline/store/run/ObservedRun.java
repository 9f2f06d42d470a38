package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A run as its target observes it: its status, its error and its processed keys.
 *
 * @param status its status, as stored
 * @param error why it failed, if it did
 * @param processedKeys sum of completed batch sizes, from the run's sharded counters
 */
@Introspected
public record ObservedRun(String status, @Nullable String error, long processedKeys) {}
