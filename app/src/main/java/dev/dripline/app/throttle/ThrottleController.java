package dev.dripline.app.throttle;

import dev.dripline.app.audit.Audited;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Patch;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.security.authentication.Authentication;

/**
 * The throttle API (P3): {@code GET /api/throttle} shows the brake and the health checks (viewer
 * and operator); the brake and the checks' limits change with the operator role. Each change
 * answers the throttle as it is afterwards. Bodies are taken as text and bound by {@link
 * dev.dripline.app.request.BodyReader}, so a 400 names every bad field.
 */
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

  @Post("/hold")
  @Consumes(MediaType.APPLICATION_JSON)
  @Audited(value = "throttle.hold", detail = "body")
  public ThrottleResponse hold(@Body @Nullable String body, Authentication caller) {
    return throttle.hold(body, caller.getName());
  }

  @Post("/release")
  @Audited("throttle.release")
  public ThrottleResponse release() {
    return throttle.release();
  }

  @Patch("/checks/{name}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Audited(value = "throttle.check", subject = "name", detail = "body")
  public ThrottleResponse change(
      @PathVariable String name, @Body @Nullable String body, Authentication caller) {
    return throttle.change(name, body, caller.getName());
  }
}
