package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code /health} tells an anonymous caller under the production profile its status alone: no JDBC
 * URL, no PostgreSQL version, no disk space. A viewer's token sees the details; outside production
 * anyone does. Temporal is unreachable here (127.0.0.1:1), so the status is 503 throughout, which
 * also shows the status code does not depend on who asks.
 */
class HealthDetailsIT {
  private static final String OPERATOR = "operator-secret-0123456789";
  private static final String VIEWER = "viewer-secret-0123456789";

  private static EmbeddedServer start(String... environments) {
    Map<String, Object> properties = new HashMap<>();
    properties.put("dripline.temporal.address", "127.0.0.1:1");
    properties.put("dripline.auth.operator-token", OPERATOR);
    properties.put("dripline.auth.viewer-token", VIEWER);
    properties.put("micronaut.server.port", -1);
    return ApplicationContext.builder()
        .properties(properties)
        .environments(environments)
        .run(EmbeddedServer.class);
  }

  private static HttpResponse<String> health(EmbeddedServer server, String token)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.getURL() + "/health"));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAnonymousCallerUnderProductionGetsTheStatusAlone() throws Exception {
    try (EmbeddedServer server = start("test", "production")) {
      HttpResponse<String> anonymous = health(server, null);
      HttpResponse<String> viewer = health(server, VIEWER);

      assertThat(anonymous.statusCode()).isEqualTo(503);
      assertThat(anonymous.body()).contains("\"status\":\"DOWN\"");
      assertThat(anonymous.body())
          .doesNotContain("details")
          .doesNotContain("jdbc:")
          .doesNotContain("PostgreSQL")
          .doesNotContain("diskSpace")
          .doesNotContain("127.0.0.1");
      assertThat(viewer.statusCode()).isEqualTo(503);
      assertThat(viewer.body()).contains("\"details\"").contains("jdbc:postgresql");
    }
  }

  @Test
  void outsideProductionAnyoneSeesTheDetails() throws Exception {
    try (EmbeddedServer server = start("test")) {
      HttpResponse<String> anonymous = health(server, null);

      assertThat(anonymous.statusCode()).isEqualTo(503);
      assertThat(anonymous.body()).contains("\"details\"").contains("jdbc:postgresql");
    }
  }
}
