package dev.dripline.app.auth;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.bind.annotation.Bindable;
import java.util.List;

/**
 * The API's credentials and the paths that need none (spec §6.3). {@link #toString()} never shows a
 * token, so a dump of the configuration cannot leak one.
 *
 * @param operatorToken bearer token that may do everything, {@code DRIPLINE_OPERATOR_TOKEN}
 * @param viewerToken bearer token that may only read (GET, HEAD), {@code DRIPLINE_VIEWER_TOKEN}
 * @param openPaths paths whose GET and HEAD need no token, {@code DRIPLINE_AUTH_OPEN_PATHS}
 *     (comma-separated Ant patterns, see {@link OpenPathsRule})
 */
@ConfigurationProperties("dripline.auth")
public record AuthConfig(
    @Nullable String operatorToken,
    @Nullable String viewerToken,
    @Bindable(defaultValue = "/health,/health/**,/prometheus,/openapi.yml,/swagger-ui/**") @Nullable
        List<String> openPaths) {

  /** The local development stack's operator token, refused by the production profile. */
  public static final String DEV_OPERATOR_TOKEN = "dev-operator";

  /** The local development stack's viewer token, refused by the production profile. */
  public static final String DEV_VIEWER_TOKEN = "dev-viewer";

  public AuthConfig {
    openPaths = openPaths == null ? List.of() : List.copyOf(openPaths);
  }

  @Override
  public String toString() {
    return "AuthConfig[operatorToken=<redacted>, viewerToken=<redacted>, openPaths="
        + openPaths
        + "]";
  }
}
