package dev.dripline.store.webhooks;

import io.micronaut.core.annotation.Introspected;

/**
 * A delivery whose workflow no dispatcher has started yet.
 *
 * @param id the delivery's id
 * @param eventId its event
 * @param endpointId its endpoint
 */
@Introspected
public record UndispatchedDelivery(long id, long eventId, long endpointId) {}
