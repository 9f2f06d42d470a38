package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micronaut.context.ApplicationContext;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The production profile refuses to start the API without real tokens (spec §6.3), whether it is
 * chosen by the Micronaut environment {@code production} or by {@code DRIPLINE_PROFILE}. The
 * context starts as the app's does, on the test database.
 */
class ProductionProfileIT {
  private static final String OPERATOR = "operator-secret-0123456789";
  private static final String VIEWER = "viewer-secret-0123456789";

  private static ApplicationContext start(Map<String, Object> properties, String... environments) {
    Map<String, Object> all = new HashMap<>(properties);
    all.put("dripline.temporal.address", "127.0.0.1:1");
    return ApplicationContext.builder().properties(all).environments(environments).start();
  }

  @ParameterizedTest(name = "operator \"{0}\", viewer \"{1}\"")
  @CsvSource({
    "dev-operator, dev-viewer, DRIPLINE_OPERATOR_TOKEN is a development default",
    "'', " + VIEWER + ", DRIPLINE_OPERATOR_TOKEN is not set",
    OPERATOR + ", short-viewer, DRIPLINE_VIEWER_TOKEN is shorter than 16 characters",
    OPERATOR + ", " + OPERATOR + ", DRIPLINE_VIEWER_TOKEN is the same as DRIPLINE_OPERATOR_TOKEN"
  })
  void theProductionEnvironmentRefusesToStartWithoutRealTokens(
      String operator, String viewer, String reason) {
    Map<String, Object> tokens =
        Map.of("dripline.auth.operator-token", operator, "dripline.auth.viewer-token", viewer);

    assertThatThrownBy(() -> start(tokens, "test", "production").close())
        .hasStackTraceContaining("the production profile refuses to start")
        .hasStackTraceContaining(reason)
        .hasStackTraceContaining("Set DRIPLINE_OPERATOR_TOKEN and DRIPLINE_VIEWER_TOKEN")
        .satisfies(
            failure -> {
              // What was configured never appears, in the message or anywhere in the trace.
              String text = stackTrace(failure);
              for (String token : new String[] {operator, viewer}) {
                if (!token.isBlank()) {
                  assertThat(text).doesNotContain(token);
                }
              }
            });
  }

  @Test
  void driplineProfileProductionRefusesTheDefaultsToo() {
    assertThatThrownBy(() -> start(Map.of("dripline.profile", "production"), "test").close())
        .hasStackTraceContaining("DRIPLINE_OPERATOR_TOKEN is a development default")
        .hasStackTraceContaining("DRIPLINE_VIEWER_TOKEN is a development default");
  }

  @Test
  void productionStartsWithRealTokens() {
    Map<String, Object> tokens =
        Map.of("dripline.auth.operator-token", OPERATOR, "dripline.auth.viewer-token", VIEWER);

    try (ApplicationContext context = start(tokens, "test", "production")) {
      assertThat(context.getBean(Profile.class).production()).isTrue();
      assertThat(context.getBean(ApiTokenValidator.class).identify(OPERATOR)).isPresent();
    }
  }

  @Test
  void aWorkerProcessStartsWithoutTokensAndAcceptsNone() {
    try (ApplicationContext context = start(Map.of(), "test", "worker", "production")) {
      assertThat(context.getBeansOfType(StartupTokenCheck.class)).isEmpty();
      assertThat(context.getBean(ApiTokenValidator.class).identify("dev-operator")).isEmpty();
      assertThat(context.getBean(ApiTokenValidator.class).identify("dev-viewer")).isEmpty();
    }
  }

  @Test
  void developmentStartsWithTheDefaults() {
    try (ApplicationContext context = start(Map.of(), "test")) {
      assertThat(context.getBean(Profile.class).production()).isFalse();
      assertThat(context.getBean(ApiTokenValidator.class).identify("dev-operator")).isPresent();
    }
  }

  private static String stackTrace(Throwable failure) {
    StringWriter text = new StringWriter();
    failure.printStackTrace(new PrintWriter(text));
    return text.toString();
  }
}
