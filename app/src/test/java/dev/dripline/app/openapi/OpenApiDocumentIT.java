package dev.dripline.app.openapi;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.OpenApiDocument;
import dev.dripline.app.OpenApiDocument.Operation;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import dev.dripline.store.webhooks.WebhookEvents;
import io.micronaut.context.annotation.Property;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.web.router.Router;
import io.micronaut.web.router.UriRouteInfo;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The OpenAPI document ({@code /openapi.yml}, spec O2) against the API the app serves, on real
 * PostgreSQL:
 *
 * <ul>
 *   <li>{@link #everyRouteServedIsDocumentedAndNoOther}: the document's operations are exactly the
 *       routes of the app's controllers, less the HTML pages under {@code /ui} and the document's
 *       own routes ({@link ApiDocsController});
 *   <li>{@link #documentedStatusesAreTheListedOnes}: each operation documents the statuses {@link
 *       #LISTED} (docs/api.md's endpoint table, which holds spec §6.1's) gives it, plus those of
 *       the input and token rules every operation shares ({@link #expected});
 *   <li>{@link #theApiAnswersOnlyDocumentedStatuses}: requests to every operation — without a
 *       token, with the viewer's, with the operator's and a record that does not exist, with a body
 *       of the wrong type or too large — are answered with a documented status, as a problem
 *       document where it is an error; {@link #aSampleOfSuccessStatusesIsAnsweredAsDocumented} adds
 *       real records.
 * </ul>
 *
 * A new {@code /api} route fails the first two until it is documented and listed. Temporal is
 * unreachable (127.0.0.1:1): nothing here needs it.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class OpenApiDocumentIT {
  /**
   * The statuses docs/api.md's endpoint table lists for each route (a superset of spec §6.1's),
   * less those every operation of a kind shares ({@link #expected}). A new route goes here, and in
   * that table, with the statuses it answers.
   */
  static final Map<String, Set<Integer>> LISTED =
      Map.ofEntries(
          entry("GET /api/backfills", Set.of(200)),
          // 201 created, 200 a repeated Idempotency-Key or a dry run; 422 and 503 of a dry run,
          // 503 also when Temporal cannot be reached.
          entry("POST /api/runs", Set.of(200, 201, 400, 409, 422, 503)),
          entry("GET /api/runs", Set.of(200, 400)),
          entry("GET /api/runs/{id}", Set.of(200, 404)),
          entry("GET /api/runs/{id}/batches", Set.of(200, 400, 404)),
          entry("POST /api/runs/{id}/stop", Set.of(202, 404, 409, 503)),
          entry("POST /api/runs/{id}/retry", Set.of(202, 404, 409, 503)),
          entry("POST /api/runs/{id}/pause", Set.of(202, 404, 409, 503)),
          entry("POST /api/runs/{id}/resume", Set.of(202, 404, 409, 503)),
          entry("PATCH /api/runs/{id}", Set.of(200, 400, 404, 409, 503)),
          entry("DELETE /api/runs/{id}", Set.of(204, 404, 409)),
          entry("POST /api/targets", Set.of(201, 400, 409, 503)),
          entry("GET /api/targets", Set.of(200, 400)),
          entry("GET /api/targets/{name}", Set.of(200, 404)),
          entry("POST /api/targets/{name}/live-batches", Set.of(202, 400, 404)),
          entry("POST /api/targets/{name}/replan", Set.of(200, 202, 400, 404, 503)),
          entry("DELETE /api/targets/{name}", Set.of(204, 404, 503)),
          entry("GET /api/throttle", Set.of(200)),
          entry("POST /api/throttle/hold", Set.of(200, 400)),
          entry("POST /api/throttle/release", Set.of(200)),
          entry("PATCH /api/throttle/checks/{name}", Set.of(200, 400)),
          entry("GET /api/pools", Set.of(200)),
          entry("PUT /api/pools/{name}", Set.of(200, 400)),
          entry("POST /api/webhooks", Set.of(201, 400)),
          entry("GET /api/webhooks", Set.of(200)),
          entry("GET /api/webhooks/{id}", Set.of(200, 404)),
          entry("DELETE /api/webhooks/{id}", Set.of(204, 404)),
          entry("GET /api/webhooks/{id}/deliveries", Set.of(200, 400, 404)),
          entry("GET /api/audit", Set.of(200, 400)));

  /** What a documented operation must carry; named in failure messages. */
  private static final String HOW =
      " (annotate the controller method with @Operation(operationId = …), one @ApiResponse per"
          + " status it answers (a shared problem response is a ProblemResponse annotation), a"
          + " @RequestBody naming the body's record, and its class with"
          + " @SecurityRequirement(name = OpenApi.BEARER) and @ProblemResponse.Unauthorized;"
          + " add its statuses to OpenApiDocumentIT.LISTED and docs/api.md)";

  /** A path segment for a record that does not exist, of any kind. */
  private static final String NONE = "999999999";

  @Inject EmbeddedServer server;
  @Inject Router router;
  @Inject Database database;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  static Stream<Operation> operations() {
    return OpenApiDocument.fromClasspath().operations().stream();
  }

  /**
   * The routes the document must describe: every route of a {@code dev.dripline} controller, less
   * HEAD twins of GETs, the HTML pages under {@code /ui} and the document's own routes. Management
   * endpoints ({@code /health}, {@code /prometheus}) are Micronaut's, not the API's.
   */
  private Set<String> servedRoutes() {
    return router
        .uriRoutes()
        .filter(route -> !route.getHttpMethodName().equals("HEAD"))
        .filter(route -> declaredBy(route).getName().startsWith("dev.dripline."))
        .filter(route -> declaredBy(route) != ApiDocsController.class)
        .map(route -> route.getHttpMethodName() + " " + route.getUriMatchTemplate().toPathString())
        .filter(route -> !isPage(route.substring(route.indexOf(' ') + 1)))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static Class<?> declaredBy(UriRouteInfo<?, ?> route) {
    return route.getTargetMethod().getDeclaringType();
  }

  private static boolean isPage(String path) {
    return path.equals("/ui") || path.startsWith("/ui/");
  }

  @Test
  void everyRouteServedIsDocumentedAndNoOther() {
    Set<String> served = servedRoutes();
    Set<String> documented =
        operations().map(Operation::route).collect(Collectors.toCollection(TreeSet::new));

    Set<String> undocumented = new TreeSet<>(served);
    undocumented.removeAll(documented);
    Set<String> notServed = new TreeSet<>(documented);
    notServed.removeAll(served);
    assertThat(undocumented).as("routes served but not in /openapi.yml" + HOW).isEmpty();
    assertThat(notServed).as("operations in /openapi.yml that no route serves").isEmpty();
    assertThat(served).contains("GET /api/runs", "POST /api/runs", "PUT /api/pools/{name}");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("operations")
  void documentedStatusesAreTheListedOnes(Operation operation) {
    assertThat(LISTED)
        .as(operation.route() + " is not in OpenApiDocumentIT.LISTED" + HOW)
        .containsKey(operation.route());
    assertThat(operation.statuses()).as(operation.route()).isEqualTo(expected(operation));
    assertThat(operation.spec().get("operationId")).as("operationId").asString().isNotBlank();
    assertThat(operation.spec().get("security"))
        .as("security of " + operation.route())
        .isEqualTo(List.of(Map.of(OpenApi.BEARER, List.of())));
    for (int status : operation.statuses()) {
      Map<String, Object> response = operation.response(status);
      assertThat(response.get("description")).as("%s %d", operation.route(), status).isNotNull();
      if (status >= 400) {
        assertThat(response.get("content"))
            .as("%s %d is a problem document", operation.route(), status)
            .isEqualTo(
                Map.of(
                    "application/problem+json",
                    Map.of("schema", Map.of("$ref", "#/components/schemas/Problem"))));
      }
    }
    if (operation.spec().containsKey("requestBody")) {
      assertThat(operation.jsonBodyRef())
          .as("%s names its body's record", operation.route())
          .startsWith("#/components/schemas/");
    }
  }

  @Test
  void everyListedRouteIsDocumented() {
    Set<String> documented =
        operations().map(Operation::route).collect(Collectors.toCollection(TreeSet::new));
    assertThat(documented).containsAll(LISTED.keySet());
  }

  /**
   * The statuses an operation documents: those {@link #LISTED}, 401 for a missing or wrong token
   * (every operation), 403 for the viewer's token (every method but GET), 413 and 415 for a body
   * larger than 1 MB or not JSON (every operation that takes one).
   */
  private static Set<Integer> expected(Operation operation) {
    Set<Integer> statuses = new TreeSet<>(LISTED.getOrDefault(operation.route(), Set.of()));
    statuses.add(401);
    if (!operation.method().equals("GET")) {
      statuses.add(403);
    }
    if (operation.spec().containsKey("requestBody")) {
      statuses.add(413);
      statuses.add(415);
    }
    return statuses;
  }

  @Test
  void theDocumentDescribesTheBearerTokensAndTheBodies() {
    OpenApiDocument document = OpenApiDocument.fromClasspath();
    assertThat(document.root().get("openapi")).asString().startsWith("3.");
    Map<String, Object> schemes =
        OpenApiDocument.map(
            OpenApiDocument.map(document.root().get("components")).get("securitySchemes"));
    assertThat(OpenApiDocument.map(schemes.get(OpenApi.BEARER)))
        .containsEntry("type", "http")
        .containsEntry("scheme", "bearer");

    Map<String, Object> create = document.schema("CreateRunRequest");
    assertThat(create).containsEntry("required", List.of("backfill"));
    assertThat(create).containsEntry("additionalProperties", false);
    assertThat(OpenApiDocument.map(OpenApiDocument.map(create.get("properties")).get("batchSize")))
        .containsEntry("type", "integer")
        .containsEntry("minimum", 1)
        .containsEntry("maximum", Integer.MAX_VALUE);
    Map<String, Object> events =
        OpenApiDocument.map(
            OpenApiDocument.map(document.schema("CreateWebhookRequest").get("properties"))
                .get("events"));
    assertThat(OpenApiDocument.map(events.get("items")).get("enum"))
        .as("the webhook events the schema lists")
        .isEqualTo(WebhookEvents.TYPES);
    assertThat(document.schema("Problem").get("required"))
        .isEqualTo(List.of("detail", "status", "title", "type"));
  }

  @Test
  void theDocumentIsServedWithoutATokenAsTheBuildMadeIt() throws Exception {
    HttpResponse<String> response = get("/openapi.yml");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/yaml");
    assertThat(OpenApiDocument.parse(response.body()).root())
        .isEqualTo(OpenApiDocument.fromClasspath().root());
  }

  /**
   * Swagger UI loads as a browser would: the page, then every script, style and icon it names, all
   * from the app (no other host), then the document it points at.
   */
  @Test
  void swaggerUiIsServedWithoutATokenWithItsOwnFiles() throws Exception {
    HttpResponse<String> page = get("/swagger-ui");

    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
    assertThat(page.body()).doesNotContainPattern("(?i)(src|href)\\s*=\\s*['\"]?(https?:)?//");
    assertThat(page.body()).contains("'/openapi.yml'");
    Matcher files = Pattern.compile("\"(/swagger-ui/res/[^\"]+)\"").matcher(page.body());
    Map<String, String> types = new TreeMap<>();
    while (files.find()) {
      HttpResponse<byte[]> file =
          http.send(request(files.group(1)).GET().build(), BodyHandlers.ofByteArray());
      assertThat(file.statusCode()).as(files.group(1)).isEqualTo(200);
      assertThat(file.body()).as(files.group(1)).isNotEmpty();
      types.put(files.group(1), file.headers().firstValue("Content-Type").orElse(""));
    }
    assertThat(types)
        .containsKeys(
            "/swagger-ui/res/swagger-ui.css",
            "/swagger-ui/res/swagger-ui-bundle.js",
            "/swagger-ui/res/swagger-ui-standalone-preset.js");
    assertThat(types.get("/swagger-ui/res/swagger-ui.css")).startsWith("text/css");
    assertThat(types.get("/swagger-ui/res/swagger-ui-bundle.js")).contains("javascript");
    assertThat(get("/swagger-ui/res/no-such-file.js").statusCode()).isEqualTo(404);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("operations")
  void theApiAnswersOnlyDocumentedStatuses(Operation operation) throws Exception {
    String path = operation.path().replaceAll("\\{[^}]+}", NONE);
    boolean body = operation.spec().containsKey("requestBody");
    List<String> seen = new ArrayList<>();

    seen.add(check(operation, send(operation.method(), path, null, body ? "{}" : null), 401));
    if (!operation.method().equals("GET")) {
      seen.add(
          check(
              operation,
              send(operation.method(), path, Api.VIEWER_TOKEN, body ? "{}" : null),
              403));
    }
    // The operator, a record that does not exist and an empty body: refused with a documented 4xx
    // (a release of the brake, the one operation without a record or a body, answers 200).
    seen.add(
        check(operation, send(operation.method(), path, Api.OPERATOR_TOKEN, body ? "{}" : null)));
    if (body) {
      HttpRequest text =
          request(path)
              .header("Authorization", "Bearer " + Api.OPERATOR_TOKEN)
              .header("Content-Type", "text/plain")
              .method(operation.method(), BodyPublishers.ofString("{}"))
              .build();
      seen.add(check(operation, http.send(text, BodyHandlers.ofString()), 415));
      String large = "{\"x\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}";
      seen.add(check(operation, send(operation.method(), path, Api.OPERATOR_TOKEN, large), 413));
    }
    assertThat(seen).as(operation.route()).isNotEmpty();
  }

  /** A sample of success and conflict statuses, on real records. */
  @Test
  void aSampleOfSuccessStatusesIsAnsweredAsDocumented() throws Exception {
    TestData data = new TestData(database);
    String backfill = TestData.uniqueName();
    String target = TestData.uniqueTarget();
    Map<String, Operation> byRoute =
        operations().collect(Collectors.toMap(Operation::route, operation -> operation));
    data.definition(backfill, 10, null);
    try {
      long ended = data.run(backfill, "completed", "{\"items\":2,\"mode\":\"fast\",\"sleepMs\":0}");
      data.target(target, backfill, "pending_backfill", 0);
      String token = Api.OPERATOR_TOKEN;
      check(byRoute.get("GET /api/backfills"), send("GET", "/api/backfills", token, null), 200);
      check(byRoute.get("GET /api/runs"), send("GET", "/api/runs?size=1", token, null), 200);
      check(byRoute.get("GET /api/runs/{id}"), send("GET", "/api/runs/" + ended, token, null), 200);
      check(
          byRoute.get("GET /api/runs/{id}/batches"),
          send("GET", "/api/runs/" + ended + "/batches", token, null),
          200);
      check(
          byRoute.get("POST /api/runs/{id}/pause"),
          send("POST", "/api/runs/" + ended + "/pause", token, null),
          409);
      check(
          byRoute.get("POST /api/runs/{id}/retry"),
          send("POST", "/api/runs/" + ended + "/retry", token, null),
          409);
      check(
          byRoute.get("GET /api/targets/{name}"),
          send("GET", "/api/targets/" + target, token, null),
          200);
      check(byRoute.get("GET /api/targets"), send("GET", "/api/targets", token, null), 200);
      check(
          byRoute.get("POST /api/targets/{name}/replan"),
          send("POST", "/api/targets/" + target + "/replan?dryRun=true", token, null),
          200);
      check(
          byRoute.get("POST /api/targets/{name}/live-batches"),
          send("POST", "/api/targets/" + target + "/live-batches", token, "{\"payload\":{}}"),
          202);
      check(byRoute.get("GET /api/throttle"), send("GET", "/api/throttle", token, null), 200);
      check(byRoute.get("GET /api/pools"), send("GET", "/api/pools", token, null), 200);
      check(
          byRoute.get("DELETE /api/runs/{id}"),
          send("DELETE", "/api/runs/" + ended, token, null),
          204);
    } finally {
      data.cleanUpTargets(target);
      data.cleanUp(backfill);
    }
  }

  /**
   * Checks that {@code response} has a status {@code operation} documents (and, if given, the one
   * expected), with a problem document for an error; returns the status and body for messages.
   */
  private static String check(
      Operation operation, HttpResponse<String> response, Integer... expected) {
    int status = response.statusCode();
    String seen = operation.route() + " answered " + status + ": " + abbreviated(response.body());
    assertThat(operation.statuses()).as(seen + "; documented").contains(status);
    if (expected.length > 0) {
      assertThat(status).as(seen).isEqualTo(expected[0]);
    }
    if (status >= 400) {
      assertThat(response.headers().firstValue("Content-Type"))
          .as(seen)
          .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    }
    return seen;
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(request(path).GET().build(), BodyHandlers.ofString());
  }

  private HttpResponse<String> send(String method, String path, String token, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = request(path);
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    request.method(
        method,
        body == null
            ? BodyPublishers.noBody()
            : BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    return http.send(request.build(), BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(server.getURL() + path))
        .timeout(Duration.ofSeconds(30));
  }

  private static String abbreviated(String text) {
    return text == null || text.length() <= 300 ? text : text.substring(0, 300) + "…";
  }
}
