package dev.dripline.app.webhooks;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;

/**
 * The body of {@code POST /api/webhooks} (spec O3).
 *
 * @param url where deliveries are posted, http or https
 * @param events the event types subscribed to, at least one
 * @param secret the signing secret, {@code whsec_<base64>}; generated when absent
 */
@Serdeable
record CreateWebhookRequest(
    @NotNull(message = "is required") @Size(max = 2000, message = "must be at most 2000 characters")
        String url,
    @NotNull(message = "is required") @Size(min = 1, message = "must name at least one event")
        List<String> events,
    @Nullable String secret) {

  @Override
  public String toString() {
    return "CreateWebhookRequest[url=" + url + ", events=" + events + "]";
  }
}
