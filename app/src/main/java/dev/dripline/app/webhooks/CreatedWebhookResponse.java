package dev.dripline.app.webhooks;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;
import java.util.List;

/**
 * The answer of {@code POST /api/webhooks}: the endpoint with its secret, the one time the secret
 * is shown.
 *
 * @param id the endpoint's id
 * @param url where deliveries are posted
 * @param events the event types it subscribes to
 * @param createdBy who registered it
 * @param createdAt when it was registered
 * @param secret the signing secret, {@code whsec_<base64>}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record CreatedWebhookResponse(
    long id,
    String url,
    List<String> events,
    @Nullable String createdBy,
    Instant createdAt,
    String secret) {

  static CreatedWebhookResponse of(WebhookResponse endpoint, String secret) {
    return new CreatedWebhookResponse(
        endpoint.id(),
        endpoint.url(),
        endpoint.events(),
        endpoint.createdBy(),
        endpoint.createdAt(),
        secret);
  }

  @Override
  public String toString() {
    return "CreatedWebhookResponse[id=" + id + ", url=" + url + ", events=" + events + "]";
  }
}
