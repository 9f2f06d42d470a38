package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;

/**
 * A queued live batch to apply.
 *
 * @param id its number (arrival order)
 * @param payload its payload, JSON text
 */
@Introspected
public record LiveBatchPayload(long id, String payload) {}
