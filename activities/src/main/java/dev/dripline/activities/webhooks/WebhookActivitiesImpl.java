package dev.dripline.activities.webhooks;

import dev.dripline.activities.run.ErrorText;
import dev.dripline.runtime.config.WebhookConfig;
import dev.dripline.store.webhooks.WebhookEvents;
import dev.dripline.store.webhooks.WebhookMessage;
import dev.dripline.store.webhooks.WebhookRepository;
import dev.dripline.workflows.webhooks.WebhookActivities;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;

/**
 * {@link WebhookActivities}: posts a delivery signed as Standard Webhooks says and records the
 * attempt on its row. The message is read from PostgreSQL at each attempt, so the workflow's
 * history holds only the delivery's id, never the secret; the secret is neither logged nor put in
 * an error. Each attempt is signed afresh with its own {@code webhook-timestamp}; the {@code
 * webhook-id} is the event's, the same at every attempt, so a receiver drops a repeat. Redirects
 * are not followed: a 3xx is a failed attempt.
 */
@Singleton
public class WebhookActivitiesImpl implements WebhookActivities {
  /** The failure type of an attempt the endpoint did not acknowledge. */
  public static final String NOT_ACKNOWLEDGED = "WebhookNotAcknowledged";

  private final WebhookRepository webhooks;
  private final WebhookConfig config;
  private final HttpClient http;
  private final Clock clock;

  public WebhookActivitiesImpl(WebhookRepository webhooks, WebhookConfig config) {
    this(webhooks, config, Clock.systemUTC());
  }

  WebhookActivitiesImpl(WebhookRepository webhooks, WebhookConfig config, Clock clock) {
    this.webhooks = webhooks;
    this.config = config;
    this.clock = clock;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(config.requestTimeout())
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** The body of a delivery: the event's type, when it happened, and its data. */
  static String body(WebhookMessage message) {
    return "{\"type\":\""
        + message.eventType()
        + "\",\"timestamp\":\""
        + message.createdAt()
        + "\",\"data\":"
        + message.data()
        + "}";
  }

  @Override
  public void deliver(long deliveryId) {
    Optional<WebhookMessage> found = webhooks.message(deliveryId);
    if (found.isEmpty() || "delivered".equals(found.get().status())) {
      return;
    }
    WebhookMessage message = found.get();
    byte[] body = body(message).getBytes(StandardCharsets.UTF_8);
    String id = WebhookEvents.messageId(message.eventId());
    long timestamp = clock.instant().getEpochSecond();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(message.url()))
            .timeout(config.requestTimeout())
            .header("content-type", "application/json")
            .header("user-agent", "Dripline-Webhooks")
            .header("webhook-id", id)
            .header("webhook-timestamp", Long.toString(timestamp))
            .header(
                "webhook-signature", WebhookSignature.sign(message.secret(), id, timestamp, body))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    int code;
    try {
      code = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      String error = ErrorText.truncate(e.getClass().getSimpleName() + ": " + e.getMessage());
      webhooks.recordAttempt(deliveryId, false, null, error);
      throw ApplicationFailure.newFailure(
          "webhook delivery " + deliveryId + " failed: " + error, NOT_ACKNOWLEDGED);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ApplicationFailure.newFailure(
          "webhook delivery " + deliveryId + " interrupted", NOT_ACKNOWLEDGED);
    }
    if (code >= 200 && code < 300) {
      webhooks.recordAttempt(deliveryId, true, code, null);
      return;
    }
    webhooks.recordAttempt(deliveryId, false, code, "HTTP " + code);
    throw ApplicationFailure.newFailure(
        "webhook delivery " + deliveryId + " answered HTTP " + code, NOT_ACKNOWLEDGED);
  }

  @Override
  public void recordGivenUp(long deliveryId) {
    webhooks.recordGivenUp(deliveryId);
  }
}
