package dev.dripline.runtime.webhooks;

import dev.dripline.runtime.config.DeploymentProfile;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.env.Environment;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which endpoints a webhook may reach (spec O3): the one rule that registration (the app's check of
 * an endpoint's URL) and delivery (the worker's post) both apply. An endpoint is an absolute http
 * or https URL with a host. Under the production profile ({@link DeploymentProfile}) its host must
 * also resolve, and to no loopback, link-local, unspecified or multicast address, so a webhook
 * cannot make the worker post to itself or to a cloud's metadata service; site-local (private)
 * addresses are allowed, as the receivers of a deployment often live on its network.
 *
 * <p>A name can resolve to another address at delivery than at registration (DNS rebinding): the
 * delivery resolves the host with {@link #resolve}, which applies the rule to every address, and
 * connects to an address it returned, never resolving the name again.
 */
@Singleton
public class WebhookAddresses {
  /** The message of a URL that is no endpoint at all. */
  static final String NOT_HTTP = "must be an http or https URL";

  /** Resolves a host name to its addresses. */
  public interface Resolver {
    InetAddress[] resolve(String host) throws UnknownHostException;
  }

  /** The rule refused a host's addresses. Its message names the host, never the URL. */
  public static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message, null, false, false);
    }
  }

  private final boolean production;
  private final Resolver resolver;

  @Inject
  public WebhookAddresses(
      Environment environment, @Value("${dripline.profile:development}") String profile) {
    this(DeploymentProfile.production(environment, profile), InetAddress::getAllByName);
  }

  public WebhookAddresses(boolean production, Resolver resolver) {
    this.production = production;
    this.resolver = resolver;
  }

  /**
   * Why {@code url} may not be a webhook's endpoint, at registration.
   *
   * @return the error's message for field {@code url}, or empty if it may
   */
  public Optional<String> urlProblem(String url) {
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      return Optional.of(NOT_HTTP);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!uri.isAbsolute()
        || !(scheme.equals("http") || scheme.equals("https"))
        || uri.getHost() == null
        || uri.getHost().isEmpty()) {
      return Optional.of(NOT_HTTP);
    }
    if (!production) {
      return Optional.empty();
    }
    try {
      resolve(host(uri));
    } catch (UnknownHostException e) {
      return Optional.of("host " + uri.getHost() + " does not resolve");
    } catch (Refused e) {
      return Optional.of(e.getMessage());
    }
    return Optional.empty();
  }

  /**
   * The addresses of {@code host} (a name, or an address literal without brackets), resolved once,
   * to connect to in order. Under the production profile every one must be allowed: one refused
   * address refuses the host, as a rebinding attacker needs only one.
   *
   * @throws UnknownHostException when it does not resolve
   * @throws Refused when the production profile refuses one of its addresses
   */
  public List<InetAddress> resolve(String host) throws UnknownHostException, Refused {
    InetAddress[] addresses = resolver.resolve(host);
    if (addresses == null || addresses.length == 0) {
      throw new UnknownHostException(host);
    }
    if (production) {
      for (InetAddress address : addresses) {
        if (!allowed(address)) {
          throw new Refused(
              "host "
                  + host
                  + " resolves to a loopback, link-local, unspecified or multicast address, which"
                  + " the production profile does not allow");
        }
      }
    }
    return List.of(addresses);
  }

  /** Whether the production profile lets a webhook reach {@code address}. */
  static boolean allowed(InetAddress address) {
    return !(address.isLoopbackAddress()
        || address.isLinkLocalAddress()
        || address.isAnyLocalAddress()
        || address.isMulticastAddress());
  }

  /** The host of {@code uri} as a resolver takes it: an IPv6 literal without its brackets. */
  public static String host(URI uri) {
    String host = uri.getHost();
    if (host != null && host.startsWith("[") && host.endsWith("]")) {
      return host.substring(1, host.length() - 1);
    }
    return host;
  }
}
