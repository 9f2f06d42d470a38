package dev.dripline.app.throttle;

import io.micronaut.context.annotation.Requires;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

/** {@code GET /api/throttle}: the health checks' last evaluations (viewer and operator). */
@Requires(notEnv = "worker")
@Controller("/api/throttle")
@ExecuteOn(TaskExecutors.BLOCKING)
public class ThrottleController {
  private final ThrottleService throttle;

  public ThrottleController(ThrottleService throttle) {
    this.throttle = throttle;
  }

  @Get
  public ThrottleResponse show() {
    return throttle.current();
  }
}
