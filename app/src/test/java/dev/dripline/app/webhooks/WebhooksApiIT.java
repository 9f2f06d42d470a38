package dev.dripline.app.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.Api;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.store.db.Database;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The webhooks API (spec O3) on the test database; deliveries are the worker's (WebhooksIT). */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class WebhooksApiIT {
  private static final String URL = "http://127.0.0.1:18131/webhooks-api-it";

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  @AfterEach
  void tearDown() {
    database.inTransaction(
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement("delete from webhook_endpoints where url like ?")) {
            delete.setString(1, URL + "%");
            return delete.executeUpdate();
          }
        });
  }

  private Api operator() {
    return new Api(client, json, Api.OPERATOR_TOKEN);
  }

  private Api viewer() {
    return new Api(client, json, Api.VIEWER_TOKEN);
  }

  private long endpoints() {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement count =
                  connection.prepareStatement("select count(*) from webhook_endpoints");
              ResultSet rows = count.executeQuery()) {
            rows.next();
            return rows.getLong(1);
          }
        });
  }

  @Test
  void anOperatorRegistersAnEndpointAndOnlyTheCreationAnswersItsSecret() {
    Api.Reply created =
        operator()
            .post(
                "/api/webhooks",
                "{\"url\":\"" + URL + "\",\"events\":[\"run.failed\",\"target.failing\"]}");

    assertThat(created.status()).isEqualTo(201);
    Number id = (Number) created.object().get("id");
    assertThat(created.location()).isEqualTo("/api/webhooks/" + id);
    assertThat(created.object())
        .containsEntry("url", URL)
        .containsEntry("events", List.of("run.failed", "target.failing"))
        .containsEntry("createdBy", "operator");
    String secret = (String) created.object().get("secret");
    assertThat(secret).matches("whsec_[A-Za-z0-9+/]{43}=");

    Api.Reply one = viewer().get("/api/webhooks/" + id);
    Api.Reply all = viewer().get("/api/webhooks");
    assertThat(one.status()).isEqualTo(200);
    assertThat(one.object()).containsEntry("url", URL).doesNotContainKey("secret");
    assertThat(all.list()).anySatisfy(w -> assertThat(w).containsEntry("url", URL));
    assertThat(all.list()).allSatisfy(w -> assertThat(w).doesNotContainKey("secret"));
    assertThat(String.valueOf(all.body())).doesNotContain(secret.substring(6));

    Api.Reply deliveries = viewer().get("/api/webhooks/" + id + "/deliveries?page=0&size=5");
    assertThat(deliveries.status()).isEqualTo(200);
    assertThat(deliveries.object()).containsEntry("total", 0).containsEntry("size", 5);
    assertThat(viewer().get("/api/webhooks/" + id + "/deliveries?size=0").errorFields())
        .containsExactly("size");

    assertThat(viewer().delete("/api/webhooks/" + id).status()).isEqualTo(403);
    assertThat(operator().delete("/api/webhooks/" + id).status()).isEqualTo(204);
    assertThat(operator().delete("/api/webhooks/" + id).status()).isEqualTo(404);
    assertThat(viewer().get("/api/webhooks/" + id).status()).isEqualTo(404);
    assertThat(viewer().get("/api/webhooks/" + id + "/deliveries").status()).isEqualTo(404);
  }

  @Test
  void everyBadFieldIsNamedInOne400AndNothingIsWritten() {
    long before = endpoints();

    Api.Reply bad =
        operator()
            .post(
                "/api/webhooks",
                "{\"url\":\"file:///etc/passwd\",\"events\":[\"run.started\",\"run.exploded\"],"
                    + "\"secret\":\"whsec_c2hvcnQ=\",\"extra\":1}");
    Api.Reply empty = operator().post("/api/webhooks", "{\"url\":\"" + URL + "\",\"events\":[]}");
    Api.Reply notStrings =
        operator().post("/api/webhooks", "{\"url\":\"" + URL + "\",\"events\":[1]}");

    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.contentType()).startsWith("application/problem+json");
    assertThat(bad.errorFields()).containsExactlyInAnyOrder("extra", "url", "events", "secret");
    assertThat(empty.errorFields()).containsExactly("events");
    assertThat(notStrings.errorFields()).containsExactly("events");
    assertThat(String.valueOf(bad.body())).doesNotContain("c2hvcnQ");
    assertThat(endpoints()).isEqualTo(before);
  }

  /**
   * Strings beyond any valid value are refused by their bounds before anything looks at them, and
   * named; an error's message stays short whatever was sent.
   */
  @Test
  void hugeStringsAndManyUnknownEventsAreRefusedWithShortMessages() {
    long before = endpoints();
    String huge = "x".repeat(100_000);

    Api.Reply longEvent =
        operator()
            .post(
                "/api/webhooks",
                "{\"url\":\"" + URL + "\",\"events\":[\"run.failed\",\"" + huge + "\"]}");
    Api.Reply longSecret =
        operator()
            .post(
                "/api/webhooks",
                "{\"url\":\""
                    + URL
                    + "\",\"events\":[\"run.failed\"],\"secret\":\"whsec_"
                    + huge
                    + "\"}");
    StringBuilder unknown = new StringBuilder("\"run.failed\"");
    for (int i = 0; i < 1_000; i++) {
      unknown.append(",\"no.such-event-").append(i).append('"');
    }
    Api.Reply manyUnknown =
        operator().post("/api/webhooks", "{\"url\":\"" + URL + "\",\"events\":[" + unknown + "]}");

    assertThat(longEvent.status()).isEqualTo(400);
    assertThat(longEvent.errorFields()).containsExactly("events");
    assertThat(detail(longEvent)).contains("at most 100 characters").hasSizeLessThan(200);
    assertThat(longSecret.status()).isEqualTo(400);
    assertThat(longSecret.errorFields()).containsExactly("secret");
    assertThat(detail(longSecret)).hasSizeLessThan(200);
    assertThat(manyUnknown.status()).isEqualTo(400);
    assertThat(manyUnknown.errorFields()).containsExactly("events");
    assertThat(detail(manyUnknown))
        .contains("no.such-event-0", "and 997 more")
        .doesNotContain("no.such-event-3")
        .hasSizeLessThan(1_000);
    assertThat(endpoints()).isEqualTo(before);
  }

  private static String detail(Api.Reply reply) {
    return String.valueOf(reply.object().get("detail"));
  }

  @Test
  void theProductionProfileRefusesLoopbackAndLinkLocalUrlsAndAllowsPrivateOnes() {
    Map<String, Object> properties =
        Map.of(
            "dripline.temporal.address", "127.0.0.1:1",
            "dripline.profile", "production",
            "dripline.auth.operator-token", "operator-secret-0123456789",
            "dripline.auth.viewer-token", "viewer-secret-0123456789");
    long before = endpoints();
    try (ApplicationContext production =
        ApplicationContext.builder().properties(properties).environments("test").start()) {
      WebhookService webhooks = production.getBean(WebhookService.class);
      for (String url :
          List.of(
              "http://127.0.0.1:18131/x",
              "http://localhost:18131/x",
              "http://169.254.169.254/latest/meta-data",
              "http://[::1]/x",
              "http://0.0.0.0/x")) {
        assertThatThrownBy(
                () -> webhooks.create("{\"url\":\"" + url + "\",\"events\":[\"run.failed\"]}", "t"))
            .as(url)
            .isInstanceOfSatisfying(
                ValidationProblem.class,
                problem ->
                    assertThat(problem.errors())
                        .singleElement()
                        .satisfies(e -> assertThat(e.field()).isEqualTo("url")));
      }
      assertThat(endpoints()).isEqualTo(before);

      CreatedWebhookResponse allowed =
          webhooks.create("{\"url\":\"http://10.0.0.7/x\",\"events\":[\"run.failed\"]}", "t");
      assertThat(allowed.url()).isEqualTo("http://10.0.0.7/x");
      webhooks.delete(allowed.id());
    }
  }
}
