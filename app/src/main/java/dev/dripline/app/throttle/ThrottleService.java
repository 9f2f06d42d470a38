package dev.dripline.app.throttle;

import dev.dripline.store.throttle.CheckRowRepository;
import jakarta.inject.Singleton;

/**
 * The API's view of the health checks: the rows the workers' evaluator records. Each row carries
 * the threshold and {@code resumeBelow} it was judged by, so the app shows what was applied without
 * being given the checks' configuration itself.
 */
@Singleton
public class ThrottleService {
  private final CheckRowRepository rows;

  public ThrottleService(CheckRowRepository rows) {
    this.rows = rows;
  }

  /** Every check's last evaluation; no hold yet. */
  public ThrottleResponse current() {
    return new ThrottleResponse(
        null, rows.findAllOrdered().stream().map(CheckResponse::of).toList());
  }
}
