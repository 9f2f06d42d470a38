package dev.dripline.runtime.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The address rule a delivery applies (the registration's is {@code WebhookUrlsTest}, app). */
class WebhookAddressesTest {
  private static final Map<String, String> DNS =
      Map.of(
          "public.example", "93.184.216.34",
          "private.example", "10.1.2.3",
          "loopback.example", "127.0.0.1",
          "metadata.example", "169.254.169.254",
          "any.example", "0.0.0.0",
          "v6loopback.example", "::1",
          "multicast.example", "224.0.0.1");

  /** An address literal's address (no lookup). */
  private static InetAddress literal(String text) throws UnknownHostException {
    return InetAddress.getAllByName(text)[0];
  }

  private static InetAddress[] resolve(String host) throws UnknownHostException {
    if (host.equals("split.example")) {
      return new InetAddress[] {literal("93.184.216.34"), literal("127.0.0.1")};
    }
    String address = DNS.get(host);
    if (address == null) {
      throw new UnknownHostException(host);
    }
    return new InetAddress[] {literal(address)};
  }

  private final WebhookAddresses production =
      new WebhookAddresses(true, WebhookAddressesTest::resolve);
  private final WebhookAddresses development =
      new WebhookAddresses(false, WebhookAddressesTest::resolve);

  @Test
  void productionRefusesEveryForbiddenAddressAtDelivery() {
    for (String host :
        new String[] {
          "loopback.example",
          "metadata.example",
          "any.example",
          "v6loopback.example",
          "multicast.example",
          "split.example"
        }) {
      assertThatThrownBy(() -> production.resolve(host))
          .as(host)
          .isInstanceOf(WebhookAddresses.Refused.class)
          .hasMessageContaining("host " + host + " resolves to a loopback");
    }
  }

  @Test
  void productionAllowsPublicAndPrivateAddressesAndReturnsTheOnesToConnectTo() throws Exception {
    assertThat(production.resolve("public.example")).containsExactly(literal("93.184.216.34"));
    assertThat(production.resolve("private.example")).containsExactly(literal("10.1.2.3"));
  }

  @Test
  void outsideProductionLoopbackStaysAllowed() throws Exception {
    assertThat(development.resolve("loopback.example")).containsExactly(literal("127.0.0.1"));
  }

  @Test
  void aHostThatDoesNotResolveIsUnknown() {
    assertThatThrownBy(() -> production.resolve("nowhere.example"))
        .isInstanceOf(UnknownHostException.class);
  }

  @Test
  void registrationAndDeliveryGiveTheSameReason() throws Exception {
    String reason = production.urlProblem("https://loopback.example/hook").orElseThrow();
    assertThatThrownBy(() -> production.resolve("loopback.example")).hasMessage(reason);
  }
}
