package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.temporal.TemporalConnection;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * D2 — transport security. The multi-service cluster of {@link LocalCluster}, its frontend serving
 * mTLS with certificates bin/dripline-cluster makes for this test (a CA, the frontend's certificate
 * naming only {@code localhost}, a client certificate), and an app and a worker JVM connected to it
 * with the client certificate, the CA, the server's name (they dial 127.0.0.1) and an API key, to
 * PostgreSQL with {@code sslmode=verify-full} when the local server offers TLS with a certificate
 * this test can read.
 *
 * <p>Asserts: a client without a certificate, without TLS, or that does not name the server is
 * refused; an {@code example.sleep} run completes exactly with the cap held; the processes'
 * PostgreSQL connections are encrypted; no secret given to the processes (tokens, API key, webhook
 * secret, a database password) is in their logs, in {@code /health}, the catalogue, or any answer
 * read, nor in the error of a start that fails on it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTlsIT {
  private static final Duration AT_MOST = Duration.ofMinutes(4);
  private static final int BATCHES = 30;
  private static final int CAP = 4;

  private final String tag = "d2-" + UUID.randomUUID().toString().substring(0, 8);
  private final Optional<String> unavailable = LocalCluster.unavailable();
  private final String operatorToken = "op-" + UUID.randomUUID();
  private final String viewerToken = "view-" + UUID.randomUUID();
  private final String apiKey = "tkey-" + UUID.randomUUID();
  private final String webhookSecret;
  private final String dbPasswordSecret = "dbpw-" + UUID.randomUUID();
  private final List<String> secrets;
  private final List<DriplineProcess> processes = new ArrayList<>();

  private Path tlsDir;
  private LocalCluster cluster;
  private String dbUrl;
  private Sql sql;
  private Api api;
  private int appPort;
  private WebhooksIT.Receiver receiver;
  private DriplineProcess app;
  private DriplineProcess worker;

  ClusterTlsIT() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    webhookSecret = "whsec_" + Base64.getEncoder().encodeToString(key);
    secrets =
        List.of(
            operatorToken,
            viewerToken,
            apiKey,
            webhookSecret.substring("whsec_".length()),
            dbPasswordSecret);
  }

  @BeforeAll
  void startClusterAndStack() throws Exception {
    if (unavailable.isPresent()) {
      return;
    }
    tlsDir = Files.createTempDirectory("dripline-d2-tls-");
    // The instance of ClusterFaultsIT may still run plain; TLS is set on a stopped instance.
    LocalCluster.fromEnvironment().close();
    cluster = LocalCluster.withTls(tlsDir);
    long start = System.nanoTime();
    cluster.start();
    FaultRun.record(
        String.format(
            "D2 cluster %s started with mTLS (certificates in %s) in %.1f s",
            cluster.address(), tlsDir, (System.nanoTime() - start) / 1e9));

    Optional<String> verifyFull = verifyFullUrl(TestDb.URL, tag);
    dbUrl = verifyFull.orElse(TestDb.URL);
    FaultRun.record(
        "D2 PostgreSQL: "
            + (verifyFull.isPresent()
                ? "sslmode=verify-full, " + dbUrl
                : "plain (the server offers no TLS with a certificate this test can read)"));
    sql = new Sql(dbUrl);
    receiver = new WebhooksIT.Receiver();

    Map<String, String> common = new HashMap<>(cluster.clientEnv());
    common.put("TEMPORAL_API_KEY", apiKey);
    common.put("DRIPLINE_DB_URL", dbUrl);
    common.put("DRIPLINE_DB_USER", "dripline");
    common.put("DRIPLINE_DB_PASSWORD", "dripline");
    common.put("DRIPLINE_DB_POOL_SIZE", "10");
    common.put("DRIPLINE_TASK_QUEUE", "dripline-" + tag);
    common.put("DRIPLINE_OPERATOR_TOKEN", operatorToken);
    common.put("DRIPLINE_VIEWER_TOKEN", viewerToken);
    Map<String, String> workerEnv = new HashMap<>(common);
    workerEnv.put("DRIPLINE_WEBHOOK_RETRY_INITIAL_INTERVAL", "200ms");
    workerEnv.put("DRIPLINE_WEBHOOK_RETRY_MAX_INTERVAL", "1s");
    appPort = LocalPorts.free();
    worker = track(DriplineProcess.worker(tag + "-worker", workerEnv)).start();
    app = track(DriplineProcess.app(tag + "-app", appPort, common)).start();
    api = new Api(DriplineProcess.local(appPort), operatorToken);
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .failFast("the app died; log " + app.log(), () -> !app.alive())
        .failFast("the worker died; log " + worker.log(), () -> !worker.alive())
        .until(
            () ->
                api.get("/api/backfills").status() == 200
                    && sql.queryLong(
                            "select count(*) from backfill_definitions where name = 'example.sleep'")
                        == 1);
  }

  @BeforeEach
  void needsTheCluster() {
    assumeTrue(unavailable.isEmpty(), unavailable.orElse(""));
  }

  @AfterAll
  void stopAll() {
    try {
      for (DriplineProcess process : processes) {
        process.kill();
      }
      if (receiver != null) {
        receiver.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @Test
  @Order(1)
  void onlyAClientWithACertificateThatNamesTheServerIsServed() {
    Path ca = tlsDir.resolve("ca.pem");
    String cert = tlsDir.resolve("client.pem").toString();
    String key = tlsDir.resolve("client.key").toString();
    String name = LocalCluster.TLS_SERVER_NAME;
    assertThat(systemInfo(config(null, cert, key, ca.toString(), name))).isEqualTo("served");
    assertThat(systemInfo(config(null, null, null, ca.toString(), name)))
        .as("TLS without a client certificate")
        .startsWith("refused");
    assertThat(systemInfo(config("false", null, null, null, null)))
        .as("no TLS")
        .startsWith("refused");
    assertThat(systemInfo(config(null, cert, key, ca.toString(), null)))
        .as("dialing 127.0.0.1 without naming the server (its certificate names localhost only)")
        .startsWith("refused");
    assertThat(systemInfo(config(null, cert, key, null, name)))
        .as("not trusting the cluster's CA (the JVM's CAs)")
        .startsWith("refused");
  }

  @Test
  @Order(2)
  void aRunCompletesExactlyThroughMtls() throws Exception {
    Api.Response hook =
        api.post(
            "/api/webhooks",
            Map.of(
                "url",
                receiver.url(),
                "events",
                List.of("run.started", "run.completed"),
                "secret",
                webhookSecret));
    assertThat(hook.status()).as("%s", hook.body()).isEqualTo(201);

    try (FaultRun run = FaultRun.sleep(host(), tag, BATCHES, 100, CAP)) {
      run.awaitCompleted(AT_MOST);
      FaultRun.record("D2 " + run.assertExact("D2-mtls", 0));
    }
    // The worker delivered the run's events, signed with the secret.
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                receiver.accepted().stream()
                    .anyMatch(
                        r ->
                            new String(r.body(), StandardCharsets.UTF_8)
                                .contains("\"run.completed\"")));

    if (!dbUrl.equals(TestDb.URL)) {
      long connections =
          sql.queryLong(
              "select count(*) from pg_stat_activity where application_name = ?", appName(tag));
      long encrypted =
          sql.queryLong(
              "select count(*) from pg_stat_activity a join pg_stat_ssl s on s.pid = a.pid"
                  + " where a.application_name = ? and s.ssl",
              appName(tag));
      assertThat(connections)
          .as("connections of the app, the worker and this test")
          .isGreaterThan(2);
      assertThat(encrypted).as("encrypted among them").isEqualTo(connections);
    }
  }

  @Test
  @Order(3)
  void noSecretIsInAnAnswerOrALog() throws Exception {
    Map<String, Api> readers = new LinkedHashMap<>();
    readers.put("operator", api);
    readers.put("anonymous", new Api(DriplineProcess.local(appPort), null));
    for (Map.Entry<String, Api> reader : readers.entrySet()) {
      for (String path :
          List.of(
              "/health",
              "/health/readiness",
              "/api/backfills",
              "/api/backfills/example.sleep",
              "/api/runs?size=50",
              "/api/webhooks",
              "/prometheus",
              "/openapi.yml",
              "/env")) {
        String body = reader.getValue().getText(path);
        assertNoSecret(reader.getKey() + " GET " + path, body);
      }
    }
    assertNoSecret("app log", Files.readString(app.log()));
    assertNoSecret("worker log", Files.readString(worker.log()));
  }

  @Test
  @Order(4)
  void aStartThatFailsOnASecretDoesNotShowIt() throws Exception {
    // A wrong database password: the connection is refused; the error names the user, not it.
    Map<String, String> wrongPassword = new HashMap<>(cluster.clientEnv());
    wrongPassword.put("TEMPORAL_API_KEY", apiKey);
    wrongPassword.put("DRIPLINE_DB_URL", dbUrl);
    wrongPassword.put("DRIPLINE_DB_PASSWORD", dbPasswordSecret);
    wrongPassword.put("DRIPLINE_TASK_QUEUE", "dripline-" + tag + "-x");
    DriplineProcess refused = track(DriplineProcess.worker(tag + "-wrong-password", wrongPassword));
    refused.start();
    // The wrong password is refused by PostgreSQL (pgjdbc names the user, not the password).
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> Files.readString(refused.log()).contains("password authentication failed"));
    refused.kill();

    // A client key that is not there: the start fails at once, naming the variable.
    Map<String, String> missingKey = new HashMap<>(wrongPassword);
    missingKey.put("DRIPLINE_DB_PASSWORD", "dripline");
    missingKey.put("TEMPORAL_TLS_CLIENT_KEY_PATH", tlsDir.resolve("absent.key").toString());
    DriplineProcess broken = track(DriplineProcess.worker(tag + "-missing-key", missingKey));
    broken.start();
    String expected =
        "TEMPORAL_TLS_CLIENT_KEY_PATH=" + tlsDir.resolve("absent.key") + ": no such file";
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> Files.readString(broken.log()).contains(expected));
    broken.kill();
    String log = Files.readString(broken.log());

    assertNoSecret("log of the worker with the wrong password", Files.readString(refused.log()));
    assertNoSecret("log of the worker with a missing key", log);
  }

  private void assertNoSecret(String where, String text) {
    for (String secret : secrets) {
      assertThat(text).as("%s holds a secret", where).doesNotContain(secret);
    }
  }

  private DriplineProcess track(DriplineProcess process) {
    processes.add(process);
    return process;
  }

  private RunHost host() {
    return new RunHost() {
      @Override
      public Api api() {
        return api;
      }

      @Override
      public Sql sql() {
        return sql;
      }
    };
  }

  private TemporalConfig config(String tls, String cert, String key, String ca, String name) {
    return new TemporalConfig(
        cluster.address(),
        "default",
        "dripline",
        Duration.ofSeconds(5),
        Duration.ofSeconds(5),
        tls,
        cert,
        key,
        ca,
        name,
        null,
        null);
  }

  /** "served", or "refused: " and why, for one GetSystemInfo call with {@code config}. */
  private static String systemInfo(TemporalConfig config) {
    WorkflowServiceStubs stubs =
        WorkflowServiceStubs.newServiceStubs(
            TemporalConnection.secure(WorkflowServiceStubsOptions.newBuilder(), config)
                .setTarget(config.address())
                .setSystemInfoTimeout(Duration.ofSeconds(5))
                .build());
    try {
      stubs
          .blockingStub()
          .withDeadlineAfter(15, TimeUnit.SECONDS)
          .getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
      return "served";
    } catch (RuntimeException e) {
      return "refused: " + e;
    } finally {
      stubs.shutdownNow();
    }
  }

  private static String appName(String tag) {
    return "dripline-" + tag;
  }

  /**
   * {@code url} with {@code sslmode=verify-full} against the certificate the local PostgreSQL
   * serves, dialing the name that certificate carries; empty when the server has TLS off or its
   * certificate is not readable here or names no host. Its connections carry the application name
   * {@link #appName}.
   */
  static Optional<String> verifyFullUrl(String url, String tag) {
    try {
      if (!"on".equals(TestDb.queryText("show ssl"))) {
        return Optional.empty();
      }
      Path cert = Path.of(TestDb.queryText("show ssl_cert_file"));
      if (!Files.isReadable(cert)) {
        return Optional.empty();
      }
      X509Certificate certificate;
      try (InputStream in = Files.newInputStream(cert)) {
        certificate =
            (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      }
      if (certificate.getSubjectAlternativeNames() == null) {
        return Optional.empty();
      }
      Optional<String> host =
          certificate.getSubjectAlternativeNames().stream()
              .filter(name -> ((Integer) name.get(0)) == 2)
              .map(name -> (String) name.get(1))
              .filter(name -> name.equals("localhost"))
              .findFirst();
      if (host.isEmpty()) {
        return Optional.empty();
      }
      // jdbc:postgresql://127.0.0.1:5432/db?sslmode=disable -> the certificate's host, verify-full.
      String rest = url.substring("jdbc:postgresql://".length());
      String hostPort = rest.substring(0, rest.indexOf('/'));
      String port = hostPort.contains(":") ? hostPort.substring(hostPort.indexOf(':')) : "";
      String path = rest.substring(rest.indexOf('/'));
      String database = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
      return Optional.of(
          "jdbc:postgresql://"
              + host.get()
              + port
              + database
              + "?sslmode=verify-full&sslrootcert="
              + cert
              + "&ApplicationName="
              + appName(tag));
    } catch (Exception e) {
      return Optional.empty();
    }
  }
}
