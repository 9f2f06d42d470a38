package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;

/**
 * Queued live batches of targets that are not primed, apart by whether their target is failing.
 *
 * @param healthy batches behind targets that are not failing
 * @param healthyAge seconds the oldest of those has waited, 0 if none
 * @param failing batches behind failing targets
 */
@Introspected
public record BlockedBacklog(long healthy, double healthyAge, long failing) {}
