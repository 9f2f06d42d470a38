package dev.dripline.app.webhooks;

import dev.dripline.app.auth.Profile;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;

/**
 * Which endpoint URLs a webhook may be registered with: an absolute http or https URL with a host.
 * Under the production profile ({@link Profile}) the host must also resolve, and to no loopback,
 * link-local, unspecified or multicast address, so a webhook cannot make the worker post to itself
 * or to a cloud's metadata service; site-local (private) addresses are allowed, as the receivers of
 * a deployment often live on its network.
 */
@Singleton
public class WebhookUrls {
  /** Resolves a host name to its addresses. */
  interface Resolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  private final boolean production;
  private final Resolver resolver;

  @Inject
  public WebhookUrls(Profile profile) {
    this(profile.production(), InetAddress::getAllByName);
  }

  WebhookUrls(boolean production, Resolver resolver) {
    this.production = production;
    this.resolver = resolver;
  }

  /**
   * Why {@code url} may not be a webhook's endpoint.
   *
   * @return the error's message for field {@code url}, or empty if it may
   */
  public Optional<String> problem(String url) {
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      return Optional.of("must be an http or https URL");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!uri.isAbsolute()
        || !(scheme.equals("http") || scheme.equals("https"))
        || uri.getHost() == null
        || uri.getHost().isEmpty()) {
      return Optional.of("must be an http or https URL");
    }
    if (!production) {
      return Optional.empty();
    }
    String host = uri.getHost();
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    InetAddress[] addresses;
    try {
      addresses = resolver.resolve(host);
    } catch (UnknownHostException e) {
      return Optional.of("host " + uri.getHost() + " does not resolve");
    }
    for (InetAddress address : addresses) {
      if (address.isLoopbackAddress()
          || address.isLinkLocalAddress()
          || address.isAnyLocalAddress()
          || address.isMulticastAddress()) {
        return Optional.of(
            "host "
                + uri.getHost()
                + " resolves to a loopback, link-local, unspecified or multicast address, which"
                + " the production profile does not allow");
      }
    }
    return Optional.empty();
  }
}
