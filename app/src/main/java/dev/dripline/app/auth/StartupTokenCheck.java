package dev.dripline.app.auth;

import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops a production API process that has no real tokens: created with the application context, it
 * fails its start-up with a message that says what to set. Worker-only processes (environment
 * {@code worker}) serve no API and need no tokens, so they skip the check; their credentials are
 * still disabled by {@link ApiTokenValidator} under the production profile.
 */
@Context
@Requires(notEnv = "worker")
public class StartupTokenCheck {
  private static final Logger log = LoggerFactory.getLogger(StartupTokenCheck.class);

  public StartupTokenCheck(AuthConfig config, Profile profile) {
    List<String> problems = TokenPolicy.problems(config);
    if (profile.production() && !problems.isEmpty()) {
      throw new IllegalStateException(
          "the production profile refuses to start without real API tokens: "
              + String.join("; ", problems)
              + ". Set "
              + TokenPolicy.OPERATOR_VARIABLE
              + " and "
              + TokenPolicy.VIEWER_VARIABLE
              + " to two different secrets of at least "
              + TokenPolicy.MIN_LENGTH
              + " characters (e.g. `openssl rand -hex 32`).");
    }
    if (!problems.isEmpty()) {
      log.info("API tokens are not fit for production ({})", String.join("; ", problems));
    }
  }
}
