package dev.dripline.app.auth;

import dev.dripline.runtime.config.DeploymentProfile;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.env.Environment;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * Whether this process runs under the production profile: {@code DRIPLINE_PROFILE=production}, or
 * the Micronaut environment {@code production} ({@code MICRONAUT_ENVIRONMENTS=production}). Under
 * it the API refuses to start without real tokens ({@link StartupTokenCheck}).
 */
@Singleton
public class Profile {
  /** The name of the production profile, as a {@code DRIPLINE_PROFILE} value and an environment. */
  public static final String PRODUCTION = DeploymentProfile.PRODUCTION;

  private final boolean production;

  @Inject
  public Profile(Environment environment, @Value("${dripline.profile:development}") String name) {
    this(DeploymentProfile.production(environment, name));
  }

  Profile(boolean production) {
    this.production = production;
  }

  public boolean production() {
    return production;
  }
}
