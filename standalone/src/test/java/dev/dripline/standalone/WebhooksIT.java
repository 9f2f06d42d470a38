package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Signed webhooks (spec O3) end to end: an app JVM and a worker JVM ({@link FaultStack}) on real
 * PostgreSQL and the Temporal dev server post to a receiver in this test (the JDK's HTTP server on
 * 127.0.0.1), which verifies each request's Standard Webhooks signature with the secret the API
 * answered at creation, answers 500 to the first request of each {@code webhook-id} and 204 to the
 * next. A run to completion delivers run.started and run.completed, each retried after its 500 with
 * the same id and body and acknowledged once; an event written while no worker runs is delivered
 * once one starts; the secret is in no later answer and in neither process's log; bad input is a
 * 400 that writes nothing.
 */
class WebhooksIT {
  private static final Duration AT_MOST = Duration.ofMinutes(3);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String tag = "webhooks-" + UUID.randomUUID().toString().substring(0, 8);
  private FaultStack stack;
  private Receiver receiver;

  /** What the receiver was sent, and what it answered. */
  record Received(String id, String timestamp, String signatures, byte[] body, int answered) {
    JsonNode json() throws IOException {
      return JSON.readTree(body);
    }

    String type() throws IOException {
      return json().path("type").asText();
    }
  }

  /** A webhook endpoint: 500 to the first request of each webhook-id, 204 to every later one. */
  static final class Receiver implements AutoCloseable {
    private final HttpServer server;
    private final List<Received> received = new ArrayList<>();
    private final Set<String> failedOnce = new HashSet<>();

    Receiver() throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.createContext("/hook", this::handle);
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    private void handle(HttpExchange exchange) throws IOException {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      String id = exchange.getRequestHeaders().getFirst("webhook-id");
      int answer;
      synchronized (this) {
        answer = failedOnce.add(String.valueOf(id)) ? 500 : 204;
        received.add(
            new Received(
                id,
                exchange.getRequestHeaders().getFirst("webhook-timestamp"),
                exchange.getRequestHeaders().getFirst("webhook-signature"),
                body,
                answer));
      }
      exchange.sendResponseHeaders(answer, -1);
      exchange.close();
    }

    synchronized List<Received> received() {
      return List.copyOf(received);
    }

    /** The requests it acknowledged (2xx): what it took as events. */
    List<Received> accepted() {
      return received().stream().filter(r -> r.answered() / 100 == 2).toList();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @BeforeEach
  void start() throws Exception {
    receiver = new Receiver();
    Map<String, String> worker = new LinkedHashMap<>();
    worker.put("DRIPLINE_WEBHOOK_RETRY_INITIAL_INTERVAL", "200ms");
    worker.put("DRIPLINE_WEBHOOK_RETRY_MAX_INTERVAL", "1s");
    worker.put("DRIPLINE_WEBHOOK_RETRY_FOR", "2m");
    worker.put("DRIPLINE_WEBHOOK_REQUEST_TIMEOUT", "5s");
    worker.put("DRIPLINE_WEBHOOK_DISPATCH_INTERVAL", "200ms");
    stack =
        new FaultStack(
                tag,
                TestDb.URL,
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                worker)
            .start();
  }

  @AfterEach
  void stop() {
    try {
      if (stack != null) {
        stack.close();
      }
    } finally {
      receiver.close();
      TestDb.execute("delete from webhook_endpoints where url = ?", receiver.url());
      TestDb.execute("delete from throttle_brake where reason = ?", tag);
    }
  }

  @Test
  void aRunToCompletionIsDeliveredSignedRetriedAfterA500AndAcceptedOnce() throws Exception {
    Api api = stack.api();
    Api.Response created =
        api.post(
            "/api/webhooks",
            Map.of("url", receiver.url(), "events", List.of("run.started", "run.completed")));
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    long webhook = created.id();
    assertThat(created.header("location")).isEqualTo("/api/webhooks/" + webhook);
    String secret = created.body().path("secret").asText();
    assertThat(secret).startsWith("whsec_");
    assertThat(Base64.getDecoder().decode(secret.substring(6))).hasSizeGreaterThanOrEqualTo(24);
    assertThat(created.body().path("events").toString())
        .isEqualTo("[\"run.started\",\"run.completed\"]");

    long run = createRun(api);
    await()
        .atMost(AT_MOST)
        .pollInterval(Duration.ofMillis(200))
        .failFast("the worker died:\n" + stack.worker().tail(40), () -> !stack.worker().alive())
        .until(() -> acceptedTypes(run).contains("run.completed"));

    // Every request is signed with the secret, whoever answered what.
    for (Received request : receiver.received()) {
      assertThat(verified(secret, request)).as("signature of %s", request.id()).isTrue();
    }
    List<Received> ofRun = ofRun(run, receiver.received());
    assertThat(acceptedTypes(run)).containsExactlyInAnyOrder("run.started", "run.completed");
    Map<String, List<Received>> byId = ofRun.stream().collect(Collectors.groupingBy(Received::id));
    assertThat(byId).hasSize(2);
    for (List<Received> attempts : byId.values()) {
      // A 500 first, then the retry with the same id and body, acknowledged once.
      assertThat(attempts.get(0).answered()).isEqualTo(500);
      assertThat(attempts).hasSizeGreaterThanOrEqualTo(2);
      assertThat(attempts.stream().filter(a -> a.answered() == 204)).hasSize(1);
      for (Received attempt : attempts) {
        assertThat(attempt.body()).isEqualTo(attempts.get(0).body());
      }
    }
    JsonNode completed =
        ofRun.stream()
            .filter(r -> r.answered() == 204 && type(r).equals("run.completed"))
            .findFirst()
            .orElseThrow()
            .json();
    assertThat(completed.path("data").path("status").asText()).isEqualTo("completed");
    assertThat(completed.path("data").path("backfill").asText()).isEqualTo("example.sleep");
    assertThat(completed.path("timestamp").asText()).isNotEmpty();

    // The delivery log: each delivered on its second attempt after a 500.
    await()
        .atMost(AT_MOST)
        .until(
            () ->
                api.get("/api/webhooks/" + webhook + "/deliveries").body().path("total").asLong()
                    >= 2);
    JsonNode deliveries = api.get("/api/webhooks/" + webhook + "/deliveries?size=50").body();
    Set<String> deliveredIds = new HashSet<>();
    for (JsonNode delivery : deliveries.path("items")) {
      if (!byId.containsKey(delivery.path("eventId").asText())) {
        continue;
      }
      deliveredIds.add(delivery.path("eventId").asText());
      assertThat(delivery.path("status").asText()).isEqualTo("delivered");
      assertThat(delivery.path("attempts").asInt()).isEqualTo(2);
      assertThat(delivery.path("lastResponseCode").asInt()).isEqualTo(204);
      assertThat(delivery.path("deliveredAt").isNull()).isFalse();
    }
    assertThat(deliveredIds).isEqualTo(byId.keySet());

    // The secret is answered once: never by a read, never logged.
    Api.Response list = api.get("/api/webhooks");
    Api.Response one = api.get("/api/webhooks/" + webhook);
    assertThat(list.status()).isEqualTo(200);
    assertThat(one.status()).isEqualTo(200);
    assertThat(one.body().path("url").asText()).isEqualTo(receiver.url());
    for (Api.Response read : List.of(list, one)) {
      assertThat(read.raw().body()).doesNotContain(secret.substring(6)).doesNotContain("secret");
    }
    assertThat(Files.readString(stack.app().log())).doesNotContain(secret.substring(6));
    assertThat(Files.readString(stack.worker().log())).doesNotContain(secret.substring(6));

    assertThat(api.delete("/api/webhooks/" + webhook).status()).isEqualTo(204);
    assertThat(api.delete("/api/webhooks/" + webhook).status()).isEqualTo(404);
    assertThat(api.get("/api/webhooks/" + webhook).status()).isEqualTo(404);
    assertThat(api.get("/api/webhooks/" + webhook + "/deliveries").status()).isEqualTo(404);
    assertThat(
            TestDb.queryLong(
                "select count(*) from webhook_deliveries where endpoint_id = ?", webhook))
        .isZero();
  }

  @Test
  void anEventWrittenWhileNoWorkerRunsIsDeliveredWhenOneStarts() throws Exception {
    Api api = stack.api();
    String secret = "whsec_" + Base64.getEncoder().encodeToString(new byte[32]);
    Api.Response created =
        api.post(
            "/api/webhooks",
            Map.of(
                "url",
                receiver.url(),
                "events",
                List.of("throttle.held", "throttle.released"),
                "secret",
                secret));
    assertThat(created.status()).as("create: %s", created.body()).isEqualTo(201);
    assertThat(created.body().path("secret").asText()).isEqualTo(secret);
    long webhook = created.id();

    stack.killWorker();
    assertThat(api.post("/api/throttle/hold", Map.of("reason", tag)).status()).isEqualTo(200);
    assertThat(
            TestDb.queryLong(
                "select count(*) from webhook_deliveries where endpoint_id = ?"
                    + " and dispatched_at is null",
                webhook))
        .isEqualTo(1);
    assertThat(api.post("/api/throttle/release", Map.of()).status()).isEqualTo(200);
    stack.startWorker();

    await()
        .atMost(AT_MOST)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> receiver.accepted().size() >= 2);
    List<Received> accepted = receiver.accepted();
    assertThat(accepted).hasSize(2);
    assertThat(List.of(type(accepted.get(0)), type(accepted.get(1))))
        .containsExactlyInAnyOrder("throttle.held", "throttle.released");
    for (Received request : receiver.received()) {
      assertThat(verified(secret, request)).isTrue();
    }
    JsonNode held =
        accepted.stream()
            .filter(r -> type(r).equals("throttle.held"))
            .findFirst()
            .orElseThrow()
            .json();
    assertThat(held.path("data").path("hold").asText()).isEqualTo("brake");
    assertThat(held.path("data").path("reason").asText()).isEqualTo(tag);
  }

  @Test
  void badUrlsEventsAndSecretsAre400sThatWriteNothing() {
    Api api = stack.api();
    long before = TestDb.queryLong("select count(*) from webhook_endpoints");
    assertBad(api, Map.of("url", "ftp://127.0.0.1/hook", "events", List.of("run.started")), "url");
    assertBad(api, Map.of("url", "not a url", "events", List.of("run.started")), "url");
    assertBad(api, Map.of("events", List.of("run.started")), "url");
    assertBad(api, Map.of("url", receiver.url(), "events", List.of("run.exploded")), "events");
    assertBad(api, Map.of("url", receiver.url(), "events", List.of()), "events");
    assertBad(api, Map.of("url", receiver.url(), "events", "run.started"), "events");
    assertBad(api, Map.of("url", receiver.url()), "events");
    assertBad(
        api,
        Map.of("url", receiver.url(), "events", List.of("run.started"), "secret", "hunter2"),
        "secret");
    assertThat(TestDb.queryLong("select count(*) from webhook_endpoints")).isEqualTo(before);
    assertThat(api.get("/api/webhooks/abc").status()).isEqualTo(404);
    assertThat(api.get("/api/webhooks/1/deliveries?limit=5").status()).isEqualTo(400);
  }

  private static void assertBad(Api api, Map<String, Object> body, String field) {
    Api.Response response = api.post("/api/webhooks", body);
    assertThat(response.status()).as("%s: %s", body, response.body()).isEqualTo(400);
    assertThat(response.header("content-type")).startsWith("application/problem+json");
    List<String> fields = new ArrayList<>();
    response.body().path("errors").forEach(error -> fields.add(error.path("field").asText()));
    assertThat(fields).as("%s", response.body()).contains(field);
  }

  private static long createRun(Api api) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("backfill", "example.sleep");
    body.put("options", Map.of("items", 6, "sleepMs", 20));
    body.put("batchSize", 2);
    Api.Response created = api.post("/api/runs", body);
    assertThat(created.status()).as("create run: %s", created.body()).isEqualTo(201);
    return created.id();
  }

  private List<String> acceptedTypes(long run) {
    return ofRun(run, receiver.accepted()).stream().map(WebhooksIT::type).toList();
  }

  private static List<Received> ofRun(long run, List<Received> requests) {
    return requests.stream()
        .filter(r -> parse(r).path("data").path("runId").asLong() == run)
        .toList();
  }

  private static String type(Received request) {
    return parse(request).path("type").asText();
  }

  private static JsonNode parse(Received request) {
    try {
      return request.json();
    } catch (IOException e) {
      throw new IllegalStateException(
          "not JSON: " + new String(request.body(), StandardCharsets.UTF_8), e);
    }
  }

  /** Verifies a request as a Standard Webhooks receiver does, independently of Dripline's code. */
  private static boolean verified(String secret, Received request) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(Base64.getDecoder().decode(secret.substring(6)), "HmacSHA256"));
    byte[] signed =
        (request.id() + "." + request.timestamp() + ".").getBytes(StandardCharsets.UTF_8);
    mac.update(signed);
    String expected = "v1," + Base64.getEncoder().encodeToString(mac.doFinal(request.body()));
    long age = System.currentTimeMillis() / 1000 - Long.parseLong(request.timestamp());
    return age >= -5 && age < 600 && List.of(request.signatures().split(" ")).contains(expected);
  }
}
