package dev.dripline.app.webhooks;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;

/**
 * The body of {@code POST /api/webhooks} (spec O3). The constraints bound every string; the service
 * checks the URL's scheme and host, that each event is a known one (those of the events' enum, from
 * {@code WebhookEvents.TYPES}), and the length of the secret's key.
 *
 * @param url where deliveries are posted, http or https
 * @param events the event types subscribed to, at least one
 * @param secret the signing secret, {@code whsec_} and the base64 of its key of 24 to 64 bytes;
 *     generated when absent
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record CreateWebhookRequest(
    @NotNull(message = "is required") @Size(max = 2000, message = "must be at most 2000 characters")
        String url,
    @NotNull(message = "is required")
        @Size(min = 1, message = "must name at least one event")
        @ArraySchema(
            schema =
                @Schema(
                    type = "string",
                    allowableValues = {
                      "run.started",
                      "run.completed",
                      "run.failed",
                      "run.stopped",
                      "target.failing",
                      "target.primed",
                      "throttle.held",
                      "throttle.released"
                    }),
            minItems = 1)
        List<
                @Size(
                    max = EVENT_MAX_LENGTH,
                    message = "must be event names (at most 100 characters each)")
                String>
            events,
    @Pattern(regexp = SECRET_PATTERN, message = SECRET_RULE) @Nullable String secret) {

  /** Longer than any event name, so a longer item is refused before it is looked up. */
  static final int EVENT_MAX_LENGTH = 100;

  /** {@code whsec_} and base64 of the length of 24 to 64 bytes; the service checks it decodes. */
  static final String SECRET_PATTERN = "^whsec_[A-Za-z0-9+/]{32,88}={0,2}$";

  static final String SECRET_RULE = "must be whsec_ followed by the base64 of 24 to 64 bytes";

  @Override
  public String toString() {
    return "CreateWebhookRequest[url=" + url + ", events=" + events + "]";
  }
}
