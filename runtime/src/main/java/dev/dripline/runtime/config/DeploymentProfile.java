package dev.dripline.runtime.config;

import io.micronaut.context.env.Environment;
import java.util.Locale;

/**
 * Whether a process runs under the production profile: {@code DRIPLINE_PROFILE=production} (the
 * setting {@code dripline.profile}), or the Micronaut environment {@code production} ({@code
 * MICRONAUT_ENVIRONMENTS=production}). The app and the worker decide it here alike.
 */
public final class DeploymentProfile {
  /** The name of the production profile, as a {@code DRIPLINE_PROFILE} value and an environment. */
  public static final String PRODUCTION = "production";

  private DeploymentProfile() {}

  /**
   * Whether {@code name} (the {@code dripline.profile} setting) or {@code environment} says
   * production.
   */
  public static boolean production(Environment environment, String name) {
    return PRODUCTION.equals(name.trim().toLowerCase(Locale.ROOT))
        || environment.getActiveNames().contains(PRODUCTION);
  }
}
