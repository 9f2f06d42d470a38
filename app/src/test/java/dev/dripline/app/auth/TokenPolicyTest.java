package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class TokenPolicyTest {
  private static final String OPERATOR = "operator-secret-0123456789";
  private static final String VIEWER = "viewer-secret-0123456789";

  private static List<String> problems(String operator, String viewer) {
    return TokenPolicy.problems(new AuthConfig(operator, viewer, List.of()));
  }

  @Test
  void twoDistinctLongTokensPass() {
    assertThat(problems(OPERATOR, VIEWER)).isEmpty();
  }

  @Test
  void missingOrBlankTokensAreNamedByTheirVariable() {
    assertThat(problems(null, " "))
        .containsExactly("DRIPLINE_OPERATOR_TOKEN is not set", "DRIPLINE_VIEWER_TOKEN is not set");
  }

  @Test
  void theDevelopmentDefaultsAreRefusedInEitherVariable() {
    assertThat(problems("dev-operator", "dev-viewer"))
        .containsExactly(
            "DRIPLINE_OPERATOR_TOKEN is a development default",
            "DRIPLINE_VIEWER_TOKEN is a development default");
    assertThat(problems("dev-viewer", VIEWER))
        .containsExactly("DRIPLINE_OPERATOR_TOKEN is a development default");
  }

  @Test
  void shortTokensAreRefused() {
    assertThat(problems("x".repeat(15), "y".repeat(16)))
        .containsExactly("DRIPLINE_OPERATOR_TOKEN is shorter than 16 characters");
  }

  @Test
  void theTwoTokensMustDiffer() {
    assertThat(problems(OPERATOR, OPERATOR))
        .containsExactly(
            "DRIPLINE_VIEWER_TOKEN is the same as DRIPLINE_OPERATOR_TOKEN; they must differ");
  }

  @Test
  void noMessageContainsAToken() {
    String secret = "s3cr3t";

    assertThat(String.join(" ", problems(secret, secret))).doesNotContain(secret);
  }
}
