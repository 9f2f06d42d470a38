package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpRequest;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.web.router.Router;
import jakarta.inject.Inject;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The authentication matrix of the whole HTTP API (spec §6.3), against real PostgreSQL: for every
 * endpoint, no token and a wrong token are 401, a viewer may read but not change (403), and the
 * operator is let through. {@link #ENDPOINTS} is the one list of endpoints; {@link
 * #everyApiRouteIsInTheMatrix} fails when a controller gains a route that is not in it.
 *
 * <p>The addresses name no run or target and the bodies are invalid, so what the operator is let
 * through to answers 400 or 404 and changes nothing; {@link #refusedRequestsChangeNothing} sends
 * valid requests for real records. Temporal is unreachable (127.0.0.1:1): authentication never
 * needs it.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class AuthMatrixIT {
  /** One endpoint of the API: its route as declared, and a request to it. */
  record Endpoint(String method, String route, String path, @Nullable String body) {
    boolean read() {
      return method.equals("GET") || method.equals("HEAD");
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  private static final String NO_RUN = "/api/runs/999999999";
  private static final String NO_TARGET = "/api/targets/authmatrix-no-such-target";
  private static final String INVALID = "{\"backfill\":\"\"}";

  /** Every endpoint of the API. Add a new endpoint here. */
  static final List<Endpoint> ENDPOINTS =
      List.of(
          new Endpoint("GET", "/api/backfills", "/api/backfills", null),
          new Endpoint("POST", "/api/runs", "/api/runs", INVALID),
          new Endpoint("GET", "/api/runs", "/api/runs?status=running&size=1", null),
          new Endpoint("GET", "/api/runs/{id}", NO_RUN, null),
          new Endpoint("GET", "/api/runs/{id}/batches", NO_RUN + "/batches", null),
          new Endpoint("POST", "/api/runs/{id}/stop", NO_RUN + "/stop", ""),
          new Endpoint("POST", "/api/runs/{id}/retry", NO_RUN + "/retry", ""),
          new Endpoint("POST", "/api/runs/{id}/pause", NO_RUN + "/pause", ""),
          new Endpoint("POST", "/api/runs/{id}/resume", NO_RUN + "/resume", ""),
          new Endpoint("PATCH", "/api/runs/{id}", NO_RUN, "{\"maxParallelBatches\":2}"),
          new Endpoint("DELETE", "/api/runs/{id}", NO_RUN, null),
          new Endpoint("POST", "/api/targets", "/api/targets", INVALID),
          new Endpoint("GET", "/api/targets", "/api/targets?size=1", null),
          new Endpoint("GET", "/api/targets/{name}", NO_TARGET, null),
          new Endpoint(
              "POST",
              "/api/targets/{name}/live-batches",
              NO_TARGET + "/live-batches",
              "{\"payload\":{}}"),
          new Endpoint("POST", "/api/targets/{name}/replan", NO_TARGET + "/replan", ""),
          new Endpoint("POST", "/api/targets/{name}/replan", NO_TARGET + "/replan?dryRun=true", ""),
          new Endpoint("DELETE", "/api/targets/{name}", NO_TARGET, null),
          new Endpoint("GET", "/api/pools", "/api/pools", null),
          // A size below 1 is refused (400) and writes nothing.
          new Endpoint("PUT", "/api/pools/{name}", "/api/pools/authmatrix-pool", "{\"size\":0}"),
          new Endpoint("GET", "/api/throttle", "/api/throttle", null),
          new Endpoint("GET", "/api/audit", "/api/audit?size=1", null),
          new Endpoint("POST", "/api/throttle/hold", "/api/throttle/hold", "{}"),
          // Releasing the brake while it is off (as in these tests) changes nothing.
          new Endpoint("POST", "/api/throttle/release", "/api/throttle/release", ""),
          new Endpoint(
              "PATCH",
              "/api/throttle/checks/{name}",
              "/api/throttle/checks/authmatrix-no-such-check",
              "{\"threshold\":1}"),
          new Endpoint("POST", "/api/webhooks", "/api/webhooks", INVALID),
          new Endpoint("GET", "/api/webhooks", "/api/webhooks", null),
          new Endpoint("GET", "/api/webhooks/{id}", "/api/webhooks/999999999", null),
          new Endpoint(
              "GET", "/api/webhooks/{id}/deliveries", "/api/webhooks/999999999/deliveries", null),
          new Endpoint("DELETE", "/api/webhooks/{id}", "/api/webhooks/999999999", null));

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;
  @Inject Router router;

  static Stream<Endpoint> endpoints() {
    return ENDPOINTS.stream();
  }

  /** The GET endpoints, and each as HEAD (Micronaut answers HEAD for every GET route). */
  static Stream<Endpoint> reads() {
    return ENDPOINTS.stream()
        .filter(Endpoint::read)
        .flatMap(get -> Stream.of(get, new Endpoint("HEAD", get.route(), get.path(), get.body())));
  }

  static Stream<Endpoint> changes() {
    return ENDPOINTS.stream().filter(endpoint -> !endpoint.read());
  }

  @Test
  void everyApiRouteIsInTheMatrix() {
    Set<String> routes =
        router
            .uriRoutes()
            .map(
                route ->
                    route.getHttpMethodName() + " " + route.getUriMatchTemplate().toPathString())
            .filter(route -> route.contains(" /api"))
            .filter(route -> !route.startsWith("HEAD ")) // HEAD twins of GET routes
            .collect(Collectors.toCollection(TreeSet::new));
    Set<String> listed =
        ENDPOINTS.stream()
            .map(endpoint -> endpoint.method() + " " + endpoint.route())
            .collect(Collectors.toCollection(TreeSet::new));

    assertThat(routes).isNotEmpty().isEqualTo(listed);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("endpoints")
  void noTokenIs401WithABearerChallenge(Endpoint endpoint) {
    Reply reply = send(endpoint, null);

    assertUnauthorized(reply);
    assertThat(reply.header("WWW-Authenticate")).isEqualTo("Bearer realm=\"dripline\"");
    assertThat(reply.detail()).contains("Authorization: Bearer");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("endpoints")
  void wrongTokenIs401(Endpoint endpoint) {
    for (String authorization :
        List.of(
            "Bearer not-a-token",
            "Bearer dev-operator2",
            "Bearer dev-operato",
            "Bearer " + "dev-operator".toUpperCase(Locale.ROOT))) {
      Reply reply = send(endpoint, authorization);

      assertUnauthorized(reply);
      assertThat(reply.header("WWW-Authenticate")).startsWith("Bearer").contains("invalid_token");
      assertThat(reply.body()).doesNotContain("dev-operator", "not-a-token");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("endpoints")
  void anotherSchemeThanBearerIs401(Endpoint endpoint) {
    Reply reply = send(endpoint, "Basic ZGV2LW9wZXJhdG9yOg==");

    assertUnauthorized(reply);
    assertThat(reply.header("WWW-Authenticate")).startsWith("Bearer");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("changes")
  void viewerMayNotChangeAnything(Endpoint endpoint) {
    Reply reply = send(endpoint, "Bearer " + Api.VIEWER_TOKEN);

    assertThat(reply.status()).isEqualTo(403);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.problem())
        .containsEntry("status", 403)
        .containsEntry("title", "Forbidden")
        .containsEntry("type", "https://dripline.dev/problems/forbidden");
    assertThat(reply.detail()).contains("operator token").contains(endpoint.method());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reads")
  void viewerMayRead(Endpoint endpoint) {
    Reply reply = send(endpoint, "Bearer " + Api.VIEWER_TOKEN);

    assertThat(reply.status()).isNotIn(401, 403).isLessThan(500);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("endpoints")
  void operatorIsLetThrough(Endpoint endpoint) {
    Reply reply = send(endpoint, "Bearer " + Api.OPERATOR_TOKEN);

    assertThat(reply.status()).isNotIn(401, 403);
    // What the endpoint itself answers to an unknown record or an invalid body.
    assertThat(reply.status()).isIn(200, 202, 204, 400, 404, 503);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"/health", "/health/liveness", "/health/readiness", "/prometheus"})
  void managementReadsAreOpen(String path) {
    Reply reply = send(new Endpoint("GET", path, path, null), null);

    assertThat(reply.status()).isNotIn(401, 403);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "/",
        "/api",
        "/api/",
        "/no-such-path",
        "/health/../api/runs",
        "/prometheus/../api/runs",
        "/health/%2e%2e/api/runs",
        "/env",
        "/beans",
        "/loggers"
      })
  void everyOtherPathNeedsAToken(String path) {
    assertUnauthorized(send(new Endpoint("GET", path, path, null), null));
  }

  @Test
  void writesToAnOpenPathStillNeedTheOperator() {
    assertUnauthorized(send(new Endpoint("POST", "/health", "/health", ""), null));
    assertThat(send(new Endpoint("POST", "/health", "/health", ""), "Bearer dev-viewer").status())
        .isEqualTo(403);
  }

  @Test
  void refusedRequestsChangeNothing() {
    TestData data = new TestData(database);
    String backfill = TestData.uniqueName();
    String target = TestData.uniqueTarget();
    String newTarget = TestData.uniqueTarget();
    data.definition(backfill, 10, 4);
    try {
      long running = data.run(backfill, "running", "{\"items\":5,\"mode\":\"fast\",\"sleepMs\":0}");
      long failed = data.run(backfill, "failed", "{\"items\":6,\"mode\":\"fast\",\"sleepMs\":0}");
      data.batch(failed, 1, 1, 5, "failed");
      data.target(target, backfill, "primed", 0);
      data.liveBatch(target, "queued", 1);
      List<Endpoint> valid =
          List.of(
              new Endpoint(
                  "POST",
                  "/api/runs",
                  "/api/runs",
                  "{\"backfill\":\"" + backfill + "\",\"options\":{\"items\":9}}"),
              new Endpoint("POST", "", "/api/runs/" + running + "/stop", ""),
              new Endpoint("POST", "", "/api/runs/" + failed + "/retry", ""),
              new Endpoint("POST", "", "/api/runs/" + running + "/pause", ""),
              new Endpoint("PATCH", "", "/api/runs/" + running, "{\"maxParallelBatches\":1}"),
              new Endpoint("DELETE", "", "/api/runs/" + failed, null),
              new Endpoint("POST", "", "/api/targets", TestData.targetBody(newTarget, backfill, 5)),
              new Endpoint(
                  "POST", "", "/api/targets/" + target + "/live-batches", "{\"payload\":{}}"),
              new Endpoint("POST", "", "/api/targets/" + target + "/replan", ""),
              new Endpoint("DELETE", "", "/api/targets/" + target, null));
      String before = snapshot(backfill, target, newTarget);

      for (Endpoint endpoint : valid) {
        assertThat(send(endpoint, null).status()).as("no token: " + endpoint).isEqualTo(401);
        assertThat(send(endpoint, "Bearer wrong").status()).as("wrong: " + endpoint).isEqualTo(401);
        assertThat(send(endpoint, "Bearer " + Api.VIEWER_TOKEN).status())
            .as("viewer: " + endpoint)
            .isEqualTo(403);
      }

      assertThat(snapshot(backfill, target, newTarget)).isEqualTo(before);
      assertThat(before).contains("\"status\":\"running\"").contains(target);
    } finally {
      data.cleanUpTargets(target, newTarget);
      data.cleanUp(backfill);
    }
  }

  /** Every row the refused requests could have touched, as JSON text. */
  private String snapshot(String backfill, String target, String newTarget) {
    return text("select json_agg(r order by r.id)::text from runs r where backfill = ?", backfill)
        + text(
            "select json_agg(b order by b.run_id, b.number)::text from batches b"
                + " join runs r on r.id = b.run_id where r.backfill = ?",
            backfill)
        + text(
            "select json_agg(t order by t.name)::text from targets t where name in (?, ?)",
            target,
            newTarget)
        + text(
            "select json_agg(l order by l.id)::text from live_batches l where target_name = ?",
            target);
  }

  private String text(String sql, Object... args) {
    return new TestData(database).text(sql, args);
  }

  private static void assertUnauthorized(Reply reply) {
    assertThat(reply.status()).isEqualTo(401);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.problem())
        .containsEntry("status", 401)
        .containsEntry("title", "Unauthorized")
        .containsEntry("type", "https://dripline.dev/problems/unauthorized");
    assertThat(reply.detail()).isNotBlank();
  }

  /** A response with its headers and raw body. */
  private record Reply(int status, HttpResponse<String> raw, String body, JsonMapper json) {
    String header(String name) {
      return raw.getHeaders().get(name);
    }

    String contentType() {
      return header("Content-Type");
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> problem() {
      try {
        return json.readValue(body, Map.class);
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + body, e);
      }
    }

    String detail() {
      return (String) problem().get("detail");
    }
  }

  private Reply send(Endpoint endpoint, @Nullable String authorization) {
    MutableHttpRequest<Object> request =
        HttpRequest.create(HttpMethod.parse(endpoint.method()), endpoint.path());
    if (endpoint.body() != null) {
      request.body(endpoint.body()).contentType(MediaType.APPLICATION_JSON_TYPE);
    }
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    HttpResponse<String> response;
    try {
      response = client.toBlocking().exchange(request, Argument.STRING, Argument.STRING);
    } catch (HttpClientResponseException e) {
      @SuppressWarnings("unchecked")
      HttpResponse<String> error = (HttpResponse<String>) e.getResponse();
      response = error;
    }
    return new Reply(response.code(), response, response.getBody(String.class).orElse(""), json);
  }
}
