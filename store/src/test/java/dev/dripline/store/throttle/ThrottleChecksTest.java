package dev.dripline.store.throttle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        null);
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
            null);

    assertInvalid(c, "dripline.throttle.checks.lag.url");
  }
}
