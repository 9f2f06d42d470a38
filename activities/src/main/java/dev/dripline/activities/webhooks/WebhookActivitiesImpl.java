package dev.dripline.activities.webhooks;

import dev.dripline.activities.run.ErrorText;
import dev.dripline.runtime.config.WebhookConfig;
import dev.dripline.runtime.webhooks.WebhookAddresses;
import dev.dripline.store.webhooks.WebhookEvents;
import dev.dripline.store.webhooks.WebhookMessage;
import dev.dripline.store.webhooks.WebhookRepository;
import dev.dripline.workflows.webhooks.WebhookActivities;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WebhookActivities}: posts a delivery signed as Standard Webhooks says and records the
 * attempt on its row. The message is read from PostgreSQL at each attempt, so the workflow's
 * history holds only the delivery's id, never the secret; the secret is neither logged nor put in
 * an error. Each attempt is signed afresh with its own {@code webhook-timestamp}; the {@code
 * webhook-id} is the event's, the same at every attempt, so a receiver drops a repeat. Redirects
 * are not followed: a 3xx is a failed attempt.
 *
 * <p>Each attempt resolves the endpoint's host itself and applies the registration's rule to its
 * addresses ({@link WebhookAddresses}): under the production profile a host that now resolves to a
 * loopback, link-local, unspecified or multicast address (DNS rebinding) is refused, recorded on
 * the delivery's row and logged, and not retried. The post then goes to a checked address ({@link
 * WebhookPost}), with the URL's host as its {@code Host} header and TLS server name.
 */
@Singleton
public class WebhookActivitiesImpl implements WebhookActivities {
  /** The failure type of an attempt the endpoint did not acknowledge. */
  public static final String NOT_ACKNOWLEDGED = "WebhookNotAcknowledged";

  /** The failure type of an attempt refused by the address rule; not retried. */
  public static final String ADDRESS_REFUSED = "WebhookAddressRefused";

  private static final Logger log = LoggerFactory.getLogger(WebhookActivitiesImpl.class);

  private final WebhookRepository webhooks;
  private final WebhookAddresses addresses;
  private final WebhookPost post;
  private final Clock clock;

  public WebhookActivitiesImpl(
      WebhookRepository webhooks, WebhookConfig config, WebhookAddresses addresses) {
    this(webhooks, config, addresses, Clock.systemUTC());
  }

  WebhookActivitiesImpl(
      WebhookRepository webhooks, WebhookConfig config, WebhookAddresses addresses, Clock clock) {
    this.webhooks = webhooks;
    this.addresses = addresses;
    this.clock = clock;
    this.post = new WebhookPost(defaultTls(), config.requestTimeout());
  }

  private static SSLSocketFactory defaultTls() {
    try {
      return SSLContext.getDefault().getSocketFactory();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no default TLS context", e);
    }
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
    URI url = URI.create(message.url());
    List<InetAddress> checked;
    try {
      checked = addresses.resolve(WebhookAddresses.host(url));
    } catch (WebhookAddresses.Refused e) {
      String error = ErrorText.truncate("refused: " + e.getMessage());
      log.warn("webhook delivery {} refused, not retried: {}", deliveryId, e.getMessage());
      webhooks.recordAttempt(deliveryId, false, null, error);
      throw ApplicationFailure.newNonRetryableFailure(
          "webhook delivery " + deliveryId + " " + error, ADDRESS_REFUSED);
    } catch (UnknownHostException e) {
      // May resolve again later: retried like an endpoint that is down.
      throw failed(deliveryId, e);
    }
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("content-type", "application/json");
    headers.put("user-agent", "Dripline-Webhooks");
    headers.put("webhook-id", id);
    headers.put("webhook-timestamp", Long.toString(timestamp));
    headers.put("webhook-signature", WebhookSignature.sign(message.secret(), id, timestamp, body));
    int code;
    try {
      code = post.send(url, checked, headers, body);
    } catch (IOException e) {
      throw failed(deliveryId, e);
    }
    if (code >= 200 && code < 300) {
      webhooks.recordAttempt(deliveryId, true, code, null);
      return;
    }
    webhooks.recordAttempt(deliveryId, false, code, "HTTP " + code);
    throw ApplicationFailure.newFailure(
        "webhook delivery " + deliveryId + " answered HTTP " + code, NOT_ACKNOWLEDGED);
  }

  /** Records a failed attempt; the failure to throw, retried. */
  private ApplicationFailure failed(long deliveryId, IOException e) {
    String error = ErrorText.truncate(e.getClass().getSimpleName() + ": " + e.getMessage());
    webhooks.recordAttempt(deliveryId, false, null, error);
    return ApplicationFailure.newFailure(
        "webhook delivery " + deliveryId + " failed: " + error, NOT_ACKNOWLEDGED);
  }

  @Override
  public void recordGivenUp(long deliveryId) {
    webhooks.recordGivenUp(deliveryId);
  }
}
