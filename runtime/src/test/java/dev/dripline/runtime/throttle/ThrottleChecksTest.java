package dev.dripline.runtime.throttle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.store.throttle.CheckLimits;
import dev.dripline.store.throttle.OnUnknown;
import io.micronaut.context.exceptions.ConfigurationException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ThrottleChecksTest {
  private static ThrottleCheckConfig config(
      String name, String kind, Double threshold, Double resumeBelow, String query) {
    return new ThrottleCheckConfig(
        name,
        kind,
        threshold,
        resumeBelow,
        Duration.ofSeconds(5),
        "hold",
        null,
        query,
        Duration.ofSeconds(2),
        null,
        null,
        null,
        null,
        null);
  }

  /** A check of {@code kind} with a query, a url and extra tables; everything else defaulted. */
  private static ThrottleCheckConfig check(
      String kind, String query, String url, List<String> tables) {
    return new ThrottleCheckConfig(
        "load",
        kind,
        10.0,
        null,
        Duration.ofSeconds(5),
        "hold",
        null,
        query,
        Duration.ofSeconds(2),
        null,
        url,
        null,
        null,
        tables);
  }

  private static void assertInvalid(ThrottleCheckConfig config, String message) {
    assertThatThrownBy(() -> ThrottleChecks.validate(List.of(config)))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(message);
  }

  @Test
  void defaultsApply() {
    ThrottleCheck check =
        ThrottleChecks.validate(List.of(config("lag", "replica-lag", 10.0, null, null))).get(0);

    assertThat(check.kind()).isEqualTo(CheckKind.REPLICA_LAG);
    assertThat(check.limits()).isEqualTo(new CheckLimits(10, 8, OnUnknown.HOLD));
    assertThat(check.appliesTo()).isEmpty();
    assertThat(check.interval()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void theDefaultResumeBelowOfANegativeThresholdIsTheThreshold() {
    ThrottleCheck check =
        ThrottleChecks.validate(List.of(config("x", "sql", -10.0, null, "select 1"))).get(0);

    assertThat(check.limits().resumeBelow()).isEqualTo(-10.0);
  }

  @Test
  void checksAreSortedByName() {
    List<ThrottleCheck> checks =
        ThrottleChecks.validate(
            List.of(
                config("b", "active-queries", 5.0, null, null),
                config("a", "sql", 1.0, 0.5, "select 1")));

    assertThat(checks).extracting(ThrottleCheck::name).containsExactly("a", "b");
  }

  @Test
  void aMissingThresholdNamesCheckAndField() {
    assertInvalid(
        config("load", "sql", null, null, "select 1"),
        "dripline.throttle.checks.load.threshold: is required");
  }

  @Test
  void anUnknownKindIsRefused() {
    assertInvalid(
        config("load", "prometheus-ish", 1.0, null, null), "dripline.throttle.checks.load.kind");
  }

  @Test
  void aMissingKindIsRefused() {
    assertInvalid(config("load", null, 1.0, null, null), "checks.load.kind: is required");
  }

  @Test
  void resumeBelowAboveTheThresholdIsRefused() {
    assertInvalid(
        config("load", "sql", 10.0, 11.0, "select 1"),
        "dripline.throttle.checks.load.resume-below");
  }

  @Test
  void anSqlCheckNeedsAQuery() {
    assertInvalid(config("load", "sql", 10.0, null, " "), "checks.load.query: is required");
  }

  @Test
  void aQueryOnAnotherKindIsRefused() {
    assertInvalid(
        config("load", "active-queries", 10.0, null, "select 1"), "checks.load.query: applies");
  }

  @Test
  void onUnknownMustBeHoldOrProceed() {
    ThrottleCheckConfig c =
        new ThrottleCheckConfig(
            "load",
            "sql",
            1.0,
            null,
            Duration.ofSeconds(5),
            "maybe",
            null,
            "select 1",
            Duration.ofSeconds(2),
            null,
            null,
            null,
            null,
            null);

    assertInvalid(c, "dripline.throttle.checks.load.on-unknown");
  }

  @Test
  void aZeroIntervalIsRefused() {
    ThrottleCheckConfig c =
        new ThrottleCheckConfig(
            "load",
            "sql",
            1.0,
            null,
            Duration.ZERO,
            "proceed",
            null,
            "select 1",
            Duration.ofSeconds(2),
            null,
            null,
            null,
            null,
            null);

    assertInvalid(c, "dripline.throttle.checks.load.interval");
  }

  @Test
  void olderThanAppliesOnlyToActiveQueries() {
    ThrottleCheckConfig c =
        new ThrottleCheckConfig(
            "load",
            "replica-lag",
            1.0,
            null,
            Duration.ofSeconds(5),
            "hold",
            null,
            null,
            Duration.ofSeconds(2),
            Duration.ofSeconds(1),
            null,
            null,
            null,
            null);

    assertInvalid(c, "dripline.throttle.checks.load.older-than");
  }

  @Test
  void aUrlMustBePostgres() {
    ThrottleCheckConfig c =
        new ThrottleCheckConfig(
            "lag",
            "replica-lag",
            1.0,
            null,
            Duration.ofSeconds(5),
            "hold",
            null,
            null,
            Duration.ofSeconds(2),
            null,
            "jdbc:mysql://x",
            null,
            null,
            null);

    assertInvalid(c, "dripline.throttle.checks.lag.url");
  }

  @Test
  void aPrometheusCheckKeepsItsQueryAndBaseUrl() {
    ThrottleCheck check =
        ThrottleChecks.validate(
                List.of(check("prometheus", " up == 0 ", "http://prometheus.internal:9090/", null)))
            .get(0);

    assertThat(check.kind()).isEqualTo(CheckKind.PROMETHEUS);
    assertThat(check.query()).isEqualTo("up == 0");
    assertThat(check.url())
        .as("without the trailing slash")
        .isEqualTo("http://prometheus.internal:9090");
    assertThat(check.tables()).isEmpty();
  }

  @Test
  void aPrometheusCheckNeedsAQuery() {
    assertInvalid(
        check("prometheus", null, "http://prometheus:9090", null),
        "dripline.throttle.checks.load.query: is required for a check of kind prometheus");
  }

  @Test
  void aPrometheusCheckNeedsAUrl() {
    assertInvalid(
        check("prometheus", "up", null, null),
        "dripline.throttle.checks.load.url: is required for a check of kind prometheus");
  }

  @Test
  void aPrometheusUrlMustBeHttp() {
    assertInvalid(
        check("prometheus", "up", "jdbc:postgresql://db/app", null),
        "dripline.throttle.checks.load.url: must be an http:// or https:// URL");
    assertInvalid(
        check("prometheus", "up", "ftp://prometheus:9090", null),
        "dripline.throttle.checks.load.url: must be an http:// or https:// URL");
    assertInvalid(
        check("prometheus", "up", "http://prometheus:9090/api/v1/query?query=up", null),
        "dripline.throttle.checks.load.url: must be Prometheus's base URL");
    assertInvalid(
        check("prometheus", "up", "http://bad host", null), "dripline.throttle.checks.load.url");
  }

  @Test
  void anSqlCheckKeepsItsJdbcUrl() {
    assertInvalid(
        check("sql", "select 1", "http://prometheus:9090", null),
        "dripline.throttle.checks.load.url: must be a jdbc:postgresql: URL");
  }

  @Test
  void userAndPasswordDoNotApplyToPrometheus() {
    ThrottleCheckConfig c =
        new ThrottleCheckConfig(
            "load",
            "prometheus",
            1.0,
            null,
            Duration.ofSeconds(5),
            "hold",
            null,
            "up",
            Duration.ofSeconds(2),
            null,
            "https://prometheus:9090",
            "monitor",
            null,
            null);

    assertInvalid(c, "dripline.throttle.checks.load.user");
  }

  @Test
  void anAutovacuumCheckNeedsNoQueryAndKeepsItsTables() {
    ThrottleCheck check =
        ThrottleChecks.validate(
                List.of(
                    check("autovacuum", null, null, List.of("orders", " public.\"Line Items\""))))
            .get(0);

    assertThat(check.kind()).isEqualTo(CheckKind.AUTOVACUUM);
    assertThat(check.tables()).containsExactly("orders", "public.\"Line Items\"");
    assertThat(check.url()).isNull();
  }

  @Test
  void aQueryOnAnAutovacuumCheckIsRefused() {
    assertInvalid(
        check("autovacuum", "select 1", null, null),
        "dripline.throttle.checks.load.query: applies only to a check of kind sql or prometheus");
  }

  @Test
  void anAutovacuumTableMustBeATableName() {
    assertInvalid(
        check("autovacuum", null, null, List.of("orders; drop table orders")),
        "dripline.throttle.checks.load.tables: 'orders; drop table orders' is not a table name");
    assertInvalid(
        check("autovacuum", null, null, List.of("a.b.c")), "dripline.throttle.checks.load.tables");
  }

  @Test
  void tablesApplyOnlyToAutovacuum() {
    assertInvalid(
        check("sql", "select 1", null, List.of("orders")),
        "dripline.throttle.checks.load.tables: applies only to a check of kind autovacuum");
  }

  @Test
  void anUnknownKindNamesEveryKind() {
    assertInvalid(
        check("vacuum", null, null, null),
        "is not one of sql, active-queries, replica-lag, autovacuum, prometheus");
  }
}
