package dev.dripline.app.webhooks;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.webhooks.WebhookEndpoint;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;
import java.util.List;

/**
 * A registered webhook endpoint as {@code GET /api/webhooks} shows it: never its secret.
 *
 * @param id the endpoint's id
 * @param url where deliveries are posted
 * @param events the event types it subscribes to
 * @param createdBy who registered it
 * @param createdAt when it was registered
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record WebhookResponse(
    long id, String url, List<String> events, @Nullable String createdBy, Instant createdAt) {

  static WebhookResponse of(WebhookEndpoint endpoint) {
    return new WebhookResponse(
        endpoint.id(),
        endpoint.url(),
        endpoint.eventList(),
        endpoint.createdBy(),
        endpoint.createdAt());
  }
}
