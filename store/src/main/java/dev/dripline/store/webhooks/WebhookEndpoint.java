package dev.dripline.store.webhooks;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * A row of {@code webhook_endpoints} (spec O3, migration V38) as the API shows it: never its
 * secret.
 *
 * @param id the endpoint's id
 * @param url where its deliveries are posted
 * @param events the event types it subscribes to, comma-separated as read
 * @param createdBy who registered it
 * @param createdAt when it was registered
 */
@Introspected
public record WebhookEndpoint(
    long id, String url, String events, @Nullable String createdBy, Instant createdAt) {

  /** The event types it subscribes to, in the order registered. */
  public List<String> eventList() {
    return Arrays.asList(events.split(","));
  }
}
