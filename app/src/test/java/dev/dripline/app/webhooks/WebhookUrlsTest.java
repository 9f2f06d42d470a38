package dev.dripline.app.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebhookUrlsTest {
  /** Names resolved without DNS; a literal address resolves to itself. */
  private static final Map<String, String> NAMES =
      Map.of(
          "hooks.example.com", "93.184.216.34",
          "metadata.internal", "169.254.169.254",
          "sneaky.example.com", "127.0.0.2",
          "receiver.corp", "10.1.2.3");

  private static InetAddress[] resolve(String host) throws UnknownHostException {
    String address = NAMES.getOrDefault(host, host);
    if (!Character.isDigit(address.charAt(0)) && !address.contains(":")) {
      throw new UnknownHostException(host);
    }
    return new InetAddress[] {InetAddress.getByName(address)};
  }

  private final WebhookUrls production = new WebhookUrls(true, WebhookUrlsTest::resolve);
  private final WebhookUrls development = new WebhookUrls(false, WebhookUrlsTest::resolve);

  @ParameterizedTest
  @ValueSource(
      strings = {"ftp://hooks.example.com/x", "hooks.example.com/x", "/relative", "http://", "a b"})
  void aUrlThatIsNotHttpOrHttpsIsRefusedEverywhere(String url) {
    assertThat(development.problem(url)).contains("must be an http or https URL");
    assertThat(production.problem(url)).contains("must be an http or https URL");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "http://127.0.0.1:8080/hook",
        "http://sneaky.example.com/hook",
        "http://metadata.internal/latest",
        "http://169.254.169.254/latest",
        "http://0.0.0.0/hook",
        "http://[::1]/hook",
        "http://[fe80::1]/hook"
      })
  void productionRefusesLoopbackLinkLocalAndUnspecifiedAddresses(String url) {
    assertThat(production.problem(url)).hasValueSatisfying(p -> assertThat(p).contains("loopback"));
    assertThat(development.problem(url)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "https://hooks.example.com/dripline",
        "HTTP://hooks.example.com/dripline",
        "http://receiver.corp:9000/hook",
        "http://192.168.1.10/hook"
      })
  void publicAndSiteLocalAddressesAreAllowedInProduction(String url) {
    assertThat(production.problem(url)).isEmpty();
  }

  @Test
  void productionRefusesAHostThatDoesNotResolve() {
    assertThat(production.problem("https://nowhere.invalid/hook"))
        .contains("host nowhere.invalid does not resolve");
  }
}
