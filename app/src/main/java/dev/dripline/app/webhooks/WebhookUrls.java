package dev.dripline.app.webhooks;

import dev.dripline.runtime.webhooks.WebhookAddresses;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * Which endpoint URLs a webhook may be registered with: {@link WebhookAddresses}'s rule, the one
 * the worker applies again at each delivery.
 */
@Singleton
public class WebhookUrls {
  /** Resolves a host name to its addresses. */
  interface Resolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  private final WebhookAddresses addresses;

  @Inject
  public WebhookUrls(WebhookAddresses addresses) {
    this.addresses = addresses;
  }

  WebhookUrls(boolean production, Resolver resolver) {
    this(new WebhookAddresses(production, resolver::resolve));
  }

  /**
   * Why {@code url} may not be a webhook's endpoint.
   *
   * @return the error's message for field {@code url}, or empty if it may
   */
  public Optional<String> problem(String url) {
    return addresses.urlProblem(url);
  }
}
