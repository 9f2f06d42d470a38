package dev.dripline.activities.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.runtime.throttle.ThrottleCheck;
import dev.dripline.runtime.throttle.ThrottleCheckConfig;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.db.Database;
import dev.dripline.store.throttle.CheckRow;
import dev.dripline.store.throttle.CheckRowRepository;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@code prometheus} health check read from a real Prometheus on 127.0.0.1 (no scrape targets:
 * the expressions are constants), and evaluated through {@link CheckEvaluator} into {@code
 * throttle_checks} on real PostgreSQL.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PrometheusCheckIT implements TestPropertyProvider {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final List<String> NAMES = List.of("prom-load", "prom-inf", "prom-quiet");

  private PrometheusServer prometheus;

  @Inject CheckReader reader;
  @Inject CheckEvaluator evaluator;
  @Inject ThrottleChecks checks;
  @Inject CheckRowRepository rows;
  @Inject Database database;

  @Override
  public Map<String, String> getProperties() {
    try {
      prometheus = PrometheusServer.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    String prefix = "dripline.throttle.checks.";
    return Map.ofEntries(
        Map.entry("dripline.throttle.evaluate", "false"),
        Map.entry(prefix + "prom-load.kind", "prometheus"),
        Map.entry(prefix + "prom-load.url", prometheus.url() + "/"),
        Map.entry(prefix + "prom-load.query", "vector(7)"),
        Map.entry(prefix + "prom-load.threshold", "5"),
        Map.entry(prefix + "prom-load.applies-to", "prom.alpha"),
        Map.entry(prefix + "prom-inf.kind", "prometheus"),
        Map.entry(prefix + "prom-inf.url", prometheus.url()),
        Map.entry(prefix + "prom-inf.query", "vector(1) / 0"),
        Map.entry(prefix + "prom-inf.threshold", "1e300"),
        Map.entry(prefix + "prom-quiet.kind", "prometheus"),
        Map.entry(prefix + "prom-quiet.url", prometheus.url()),
        Map.entry(prefix + "prom-quiet.query", "vector(2)"),
        Map.entry(prefix + "prom-quiet.threshold", "5"));
  }

  @AfterAll
  void stopPrometheus() throws Exception {
    NAMES.forEach(rows::deleteByName);
    if (prometheus != null) {
      prometheus.close();
    }
  }

  @BeforeEach
  void forgetRows() {
    NAMES.forEach(rows::deleteByName);
  }

  private ThrottleCheck check(String url, String query, Duration timeout) {
    return ThrottleChecks.validate(
            List.of(
                new ThrottleCheckConfig(
                    "prom",
                    "prometheus",
                    5.0,
                    null,
                    Duration.ofSeconds(5),
                    "hold",
                    null,
                    query,
                    timeout,
                    null,
                    url,
                    null,
                    null,
                    null)))
        .get(0);
  }

  private CheckReading read(String query) {
    return reader.read(check(prometheus.url(), query, Duration.ofSeconds(10)));
  }

  @Test
  void aVectorOfOneSampleIsItsValue() {
    CheckReading reading = read("vector(7)");

    assertThat(reading.value()).isEqualTo(7.0);
    assertThat(reading.error()).isNull();
  }

  @Test
  void aScalarIsItsValue() {
    assertThat(read("scalar(vector(3))").value()).isEqualTo(3.0);
    assertThat(read("3").value()).isEqualTo(3.0);
    assertThat(read("-0.25").value()).isEqualTo(-0.25);
  }

  @Test
  void twoSeriesAreUnknownSayingHowMany() {
    CheckReading reading =
        read(
            "label_replace(vector(1), \"side\", \"a\", \"\", \"\")"
                + " or label_replace(vector(2), \"side\", \"b\", \"\", \"\")");

    assertThat(reading.value()).isNull();
    assertThat(reading.error()).contains("2 series");
  }

  @Test
  void noSeriesIsUnknown() {
    CheckReading reading = read("absent_metric_xyz");

    assertThat(reading.value()).isNull();
    assertThat(reading.error()).contains("no series");
  }

  @Test
  void anInvalidExpressionIsUnknownWithPrometheusError() {
    CheckReading reading = read("sum(");

    assertThat(reading.value()).isNull();
    assertThat(reading.error()).contains("HTTP 400").contains("bad_data").contains("parse error");
  }

  @Test
  void notANumberIsUnknown() {
    CheckReading reading = read("vector(0) / 0");

    assertThat(reading.value()).isNull();
    assertThat(reading.error()).contains("NaN");
  }

  @Test
  void plusInfinityIsANumber() {
    assertThat(read("vector(1) / 0").value()).isEqualTo(Double.POSITIVE_INFINITY);
  }

  @Test
  void aStringOrAMatrixIsUnknown() {
    CheckReading string = read("\"hello\"");
    CheckReading matrix = read("vector(1)[1m:10s]");

    assertThat(string.value()).isNull();
    assertThat(string.error()).contains("returned a string");
    assertThat(matrix.value()).isNull();
    assertThat(matrix.error()).contains("returned a matrix");
  }

  @Test
  void aClosedPortIsUnknown() {
    int closed = PrometheusServer.freePort();

    CheckReading reading =
        reader.read(check("http://127.0.0.1:" + closed, "vector(1)", Duration.ofSeconds(10)));

    assertThat(reading.value()).isNull();
    assertThat(reading.error())
        .contains("http://127.0.0.1:" + closed)
        .contains("cannot be reached")
        .contains("ConnectException")
        .contains("refused");
  }

  @Test
  void aServerThatNeverAnswersIsUnknownWithinTheTimeout() throws IOException {
    // Accepted by the kernel (backlog), never read: the request waits for an answer that never
    // comes.
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      long started = System.nanoTime();

      CheckReading reading =
          reader.read(
              check(
                  "http://127.0.0.1:" + silent.getLocalPort(),
                  "vector(1)",
                  Duration.ofMillis(500)));

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
      assertThat(reading.value()).isNull();
      assertThat(reading.error()).contains("did not answer within 500 ms");
    }
  }

  @Test
  void aCheckOverItsThresholdHoldsTheBackfillsItAppliesTo() {
    CheckRow over = evaluator.evaluateIfDue(checks.named("prom-load").orElseThrow(), T0).get();
    CheckRow quiet = evaluator.evaluateIfDue(checks.named("prom-quiet").orElseThrow(), T0).get();

    assertThat(over.kind()).isEqualTo("prometheus");
    assertThat(over.value()).isEqualTo(7.0);
    assertThat(over.state()).isEqualTo("over");
    assertThat(over.holding()).isTrue();
    assertThat(holds("prom.alpha")).contains("prom-load");
    assertThat(holds("prom.beta")).doesNotContain("prom-load");
    assertThat(quiet.value()).isEqualTo(2.0);
    assertThat(quiet.state()).isEqualTo("clear");
    assertThat(quiet.holding()).isFalse();
  }

  /** What holds a run of {@code backfill} now, as the claims read it. */
  private List<String> holds(String backfill) {
    return database.inTransaction(
        c -> {
          try (PreparedStatement s = c.prepareStatement("select dripline_run_holds(?)")) {
            s.setString(1, backfill);
            try (ResultSet r = s.executeQuery()) {
              r.next();
              return List.of((String[]) r.getArray(1).getArray());
            }
          }
        });
  }

  @Test
  void plusInfinityIsRecordedOverAnyThreshold() {
    CheckRow row = evaluator.evaluateIfDue(checks.named("prom-inf").orElseThrow(), T0).get();

    assertThat(row.state()).isEqualTo("over");
    assertThat(row.holding()).isTrue();
    assertThat(rows.findByName("prom-inf").orElseThrow().value())
        .isEqualTo(Double.POSITIVE_INFINITY);
  }
}
