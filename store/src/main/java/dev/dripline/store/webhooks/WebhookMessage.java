package dev.dripline.store.webhooks;

import io.micronaut.core.annotation.Introspected;
import java.time.Instant;

/**
 * What one delivery posts: the endpoint's url and secret, the event.
 *
 * @param deliveryId the delivery's id
 * @param status the delivery's status
 * @param url where it is posted
 * @param secret the endpoint's signing secret, {@code whsec_<base64>}
 * @param eventId the event's id
 * @param eventType the event's type
 * @param data the event's data, a JSON object as text
 * @param createdAt when the event happened
 */
@Introspected
public record WebhookMessage(
    long deliveryId,
    String status,
    String url,
    String secret,
    long eventId,
    String eventType,
    String data,
    Instant createdAt) {

  @Override
  public String toString() {
    // The secret stays out of every log line and exception message.
    return "WebhookMessage[deliveryId=" + deliveryId + ", eventId=" + eventId + "]";
  }
}
