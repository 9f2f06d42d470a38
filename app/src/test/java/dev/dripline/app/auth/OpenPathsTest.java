package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OpenPathsTest {
  private final OpenPaths defaults = new OpenPaths(List.of("/health", "/health/**", "/prometheus"));

  @ParameterizedTest
  @ValueSource(strings = {"/health", "/health/liveness", "/health/readiness", "/prometheus"})
  void theDefaultsOpenHealthAndMetrics(String path) {
    assertThat(defaults.contains(path)).isTrue();
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
    assertThat(defaults.contains(path)).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"/health", "/prometheus", "/api/runs"})
  void anEmptyListOpensNothing(String path) {
    assertThat(new OpenPaths(List.of()).contains(path)).isFalse();
    assertThat(new OpenPaths(List.of(" ")).contains(path)).isFalse();
  }
}
