package dev.dripline.app.webhooks;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.webhooks.WebhookDeliveryView;
import dev.dripline.store.webhooks.WebhookEvents;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * One event's delivery to an endpoint, as {@code GET /api/webhooks/{id}/deliveries} shows it.
 *
 * @param id the delivery's id
 * @param eventId the event's id, the {@code webhook-id} header of every attempt
 * @param eventType the event's type
 * @param status pending, retrying, delivered or failed
 * @param attempts attempts made so far
 * @param lastResponseCode the HTTP status of the last attempt, or {@code null} without a response
 * @param lastError why the last attempt failed, or {@code null}
 * @param createdAt when the event happened
 * @param deliveredAt when the endpoint acknowledged it, or {@code null}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record WebhookDeliveryResponse(
    long id,
    String eventId,
    String eventType,
    String status,
    int attempts,
    @Nullable Integer lastResponseCode,
    @Nullable String lastError,
    Instant createdAt,
    @Nullable Instant deliveredAt) {

  static WebhookDeliveryResponse of(WebhookDeliveryView delivery) {
    return new WebhookDeliveryResponse(
        delivery.id(),
        WebhookEvents.messageId(delivery.eventId()),
        delivery.eventType(),
        delivery.status(),
        delivery.attempts(),
        delivery.lastResponseCode(),
        delivery.lastError(),
        delivery.createdAt(),
        delivery.deliveredAt());
  }
}
