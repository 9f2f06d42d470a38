package dev.dripline.activities.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A post to an address resolved beforehand keeps the URL's host: as the {@code Host} header, and
 * over https as the name the server's certificate is verified against. The receiver listens on the
 * loopback address with a certificate for {@code receiver.example} only (a test keystore), and the
 * client trusts that certificate alone.
 */
class WebhookPostTest {
  private static final char[] PASSWORD = "dripline".toCharArray();

  private HttpsServer receiver;
  private SSLContext clientTls;
  private final List<String> hostHeaders = new CopyOnWriteArrayList<>();
  private final List<String> bodies = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = getClass().getResourceAsStream("/webhooks/receiver-tls.p12")) {
      keys.load(in, PASSWORD);
    }
    KeyManagerFactory keyManagers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, PASSWORD);
    SSLContext serverTls = SSLContext.getInstance("TLS");
    serverTls.init(keyManagers.getKeyManagers(), null, null);
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(keys);
    clientTls = SSLContext.getInstance("TLS");
    clientTls.init(null, trust.getTrustManagers(), null);

    receiver = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    receiver.setHttpsConfigurator(new HttpsConfigurator(serverTls));
    receiver.createContext(
        "/hook",
        exchange -> {
          hostHeaders.add(exchange.getRequestHeaders().getFirst("Host"));
          bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          exchange.sendResponseHeaders(202, -1);
          exchange.close();
        });
    receiver.start();
  }

  @AfterEach
  void tearDown() {
    receiver.stop(0);
  }

  private WebhookPost post() {
    return new WebhookPost(clientTls.getSocketFactory(), Duration.ofSeconds(30));
  }

  @Test
  void anHttpsPostToTheCheckedAddressVerifiesTheUrlsHostAndSendsItAsHost() throws Exception {
    int port = receiver.getAddress().getPort();

    int status =
        post()
            .send(
                URI.create("https://receiver.example:" + port + "/hook?x=1"),
                List.of(InetAddress.getLoopbackAddress()),
                Map.of("content-type", "application/json"),
                "{\"a\":1}".getBytes(StandardCharsets.UTF_8));

    assertThat(status).isEqualTo(202);
    assertThat(hostHeaders).containsExactly("receiver.example:" + port);
    assertThat(bodies).containsExactly("{\"a\":1}");
  }

  @Test
  void aCertificateForAnotherNameThanTheUrlsIsRefused() {
    int port = receiver.getAddress().getPort();

    assertThatThrownBy(
            () ->
                post()
                    .send(
                        URI.create("https://elsewhere.example:" + port + "/hook"),
                        List.of(InetAddress.getLoopbackAddress()),
                        Map.of(),
                        new byte[0]))
        .isInstanceOf(SSLHandshakeException.class);
    assertThat(hostHeaders).isEmpty();
  }
}
