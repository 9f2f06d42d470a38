package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.rules.SecurityRuleResult;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

class OpenPathsRuleTest {
  private final OpenPathsRule defaults = rule("/health", "/health/**", "/prometheus");

  private static OpenPathsRule rule(String... openPaths) {
    return new OpenPathsRule(new AuthConfig(null, null, List.of(openPaths)));
  }

  private static SecurityRuleResult check(OpenPathsRule rule, HttpMethod method, String path) {
    return Mono.from(rule.check(HttpRequest.create(method, path), null)).block();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/health", "/health/liveness", "/health/readiness", "/prometheus"})
  void theDefaultsOpenHealthAndMetrics(String path) {
    assertThat(defaults.isOpen(path)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "/",
        "/api/runs",
        "/prometheus/x",
        "/prometheusx",
        "/healthx",
        "/health/",
        "/health//x",
        "/health/../api/runs",
        "/health/./x",
        "/health/%2e%2e/api",
        "/health;x",
        "/health/x;/../api"
      })
  void nothingElseIsOpen(String path) {
    assertThat(defaults.isOpen(path)).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/health", "/prometheus", "/api/runs"})
  void anEmptyListOpensNothing(String path) {
    assertThat(new OpenPathsRule(new AuthConfig(null, null, List.of())).isOpen(path)).isFalse();
    assertThat(rule(" ").isOpen(path)).isFalse();
  }

  @Test
  void readsOfAnOpenPathAreAllowedWithoutAToken() {
    assertThat(check(defaults, HttpMethod.GET, "/health/liveness"))
        .isEqualTo(SecurityRuleResult.ALLOWED);
    assertThat(check(defaults, HttpMethod.HEAD, "/prometheus"))
        .isEqualTo(SecurityRuleResult.ALLOWED);
  }

  @ParameterizedTest
  @EnumSource(
      value = HttpMethod.class,
      names = {"GET", "HEAD", "CUSTOM"},
      mode = EnumSource.Mode.EXCLUDE)
  void anythingButAReadIsLeftToTheAccessRules(HttpMethod method) {
    assertThat(check(defaults, method, "/health")).isEqualTo(SecurityRuleResult.UNKNOWN);
  }

  @Test
  void otherPathsAreLeftToTheAccessRules() {
    assertThat(check(defaults, HttpMethod.GET, "/api/runs")).isEqualTo(SecurityRuleResult.UNKNOWN);
    assertThat(check(defaults, HttpMethod.GET, "/health/../api/runs"))
        .isEqualTo(SecurityRuleResult.UNKNOWN);
  }
}
