package dev.dripline.app.ui;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * The dashboard's settings.
 *
 * @param temporalWebUrl the Temporal Web UI's base URL, for a run's link to its workflow, {@code
 *     DRIPLINE_TEMPORAL_UI_URL}
 * @param sessionLifetime how long a sign-in lasts, {@code DRIPLINE_UI_SESSION_LIFETIME}
 * @param refreshSeconds how often a page refreshes its live part, {@code DRIPLINE_UI_REFRESH}
 */
@ConfigurationProperties("dripline.ui")
public record UiConfig(
    @Bindable(defaultValue = "http://localhost:8233") String temporalWebUrl,
    @Bindable(defaultValue = "12h") Duration sessionLifetime,
    @Bindable(defaultValue = "3") int refreshSeconds) {

  public UiConfig {
    while (temporalWebUrl.endsWith("/")) {
      temporalWebUrl = temporalWebUrl.substring(0, temporalWebUrl.length() - 1);
    }
  }
}
