package dev.dripline.store.webhooks;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A row of {@code webhook_deliveries} with its event's type: one event's delivery to one endpoint,
 * as its attempts left it.
 *
 * @param id the delivery's id
 * @param eventId the event's id
 * @param eventType the event's type, {@code run.completed} and the like
 * @param status pending, retrying, delivered or failed
 * @param attempts attempts made so far
 * @param lastResponseCode the HTTP status of the last attempt, or {@code null} without a response
 * @param lastError why the last attempt failed, or {@code null}
 * @param createdAt when the event happened
 * @param deliveredAt when an attempt was answered with a 2xx, or {@code null}
 */
@Introspected
public record WebhookDeliveryView(
    long id,
    long eventId,
    String eventType,
    String status,
    int attempts,
    @Nullable Integer lastResponseCode,
    @Nullable String lastError,
    Instant createdAt,
    @Nullable Instant deliveredAt) {}
