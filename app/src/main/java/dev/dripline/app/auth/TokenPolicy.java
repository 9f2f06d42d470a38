package dev.dripline.app.auth;

import io.micronaut.core.annotation.Nullable;
import java.util.ArrayList;
import java.util.List;

/**
 * What the production profile asks of the API tokens: both set, not the development defaults, at
 * least {@value #MIN_LENGTH} characters, and different from each other. The messages name the
 * environment variable to set and never contain a token.
 */
public final class TokenPolicy {
  /** The shortest token the production profile accepts. */
  public static final int MIN_LENGTH = 16;

  static final String OPERATOR_VARIABLE = "DRIPLINE_OPERATOR_TOKEN";
  static final String VIEWER_VARIABLE = "DRIPLINE_VIEWER_TOKEN";

  private TokenPolicy() {}

  /** Every reason the configured tokens are not fit for production; empty when they are. */
  public static List<String> problems(AuthConfig config) {
    List<String> problems = new ArrayList<>();
    check(OPERATOR_VARIABLE, config.operatorToken(), problems);
    check(VIEWER_VARIABLE, config.viewerToken(), problems);
    String operator = config.operatorToken();
    if (operator != null && !operator.isBlank() && operator.equals(config.viewerToken())) {
      problems.add(VIEWER_VARIABLE + " is the same as " + OPERATOR_VARIABLE + "; they must differ");
    }
    return problems;
  }

  private static void check(String variable, @Nullable String token, List<String> problems) {
    if (token == null || token.isBlank()) {
      problems.add(variable + " is not set");
    } else if (token.equals(AuthConfig.DEV_OPERATOR_TOKEN)
        || token.equals(AuthConfig.DEV_VIEWER_TOKEN)) {
      problems.add(variable + " is a development default");
    } else if (token.length() < MIN_LENGTH) {
      problems.add(variable + " is shorter than " + MIN_LENGTH + " characters");
    }
  }
}
