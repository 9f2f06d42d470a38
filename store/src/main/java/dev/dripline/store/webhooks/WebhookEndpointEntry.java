package dev.dripline.store.webhooks;

import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * The table {@code webhook_endpoints} (spec O3, migration V38), for its repository; reads go
 * through {@link WebhookEndpoint}, which has no secret.
 *
 * @param id the endpoint's id
 * @param url where deliveries are posted
 * @param createdAt when it was registered
 */
@MappedEntity("webhook_endpoints")
public record WebhookEndpointEntry(@Id long id, String url, Instant createdAt) {

  @Override
  public String toString() {
    return "WebhookEndpointEntry[id=" + id + "]";
  }
}
