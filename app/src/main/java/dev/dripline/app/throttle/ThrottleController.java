package dev.dripline.app.throttle;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import dev.dripline.app.problem.Problem;
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
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.parameters.RequestBody;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.responses.ApiResponses;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;

/**
 * The throttle API (P3): {@code GET /api/throttle} shows the brake and the health checks (viewer
 * and operator); the brake and the checks' limits change with the operator role. Each change
 * answers the throttle as it is afterwards. Bodies are taken as text and bound by {@link
 * dev.dripline.app.request.BodyReader}, so a 400 names every bad field.
 */
@Requires(notEnv = "worker")
@Controller("/api/throttle")
@Tag(name = "throttle")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class ThrottleController {
  private final ThrottleService throttle;

  public ThrottleController(ThrottleService throttle) {
    this.throttle = throttle;
  }

  @Get
  @Operation(operationId = "getThrottle", summary = "The brake and the health checks")
  @ApiResponse(
      responseCode = "200",
      description = "the throttle",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = ThrottleResponse.class)))
  public ThrottleResponse show() {
    return throttle.current();
  }

  @Post("/hold")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "holdThrottle",
      summary = "Put the brake on: no new batch of any run starts")
  @RequestBody(
      description = "why every run is held",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = HoldRequest.class)))
  @ApiResponse(
      responseCode = "200",
      description = "the throttle, held (a repeated hold keeps the first)",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = ThrottleResponse.class)))
  @ProblemResponse.InvalidField
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited(value = "throttle.hold", detail = "body")
  public ThrottleResponse hold(
      @Body @Parameter(hidden = true) @Nullable String body, Authentication caller) {
    return throttle.hold(body, caller.getName());
  }

  @Post("/release")
  @Operation(operationId = "releaseThrottle", summary = "Take the brake off")
  @ApiResponse(
      responseCode = "200",
      description = "the throttle, released",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = ThrottleResponse.class)))
  @ProblemResponse.ViewerForbidden
  @Audited("throttle.release")
  public ThrottleResponse release() {
    return throttle.release();
  }

  @Patch("/checks/{name}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "changeThrottleCheck",
      summary = "Override a health check's threshold or resumeBelow")
  @RequestBody(
      description = "the limits to change; at least one",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = CheckChangeRequest.class)))
  @ApiResponses({
    @ApiResponse(
        responseCode = "200",
        description = "the throttle, the override stored",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = ThrottleResponse.class))),
    @ApiResponse(
        responseCode = "400",
        description = "a field is invalid, or no such check (name)",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited(value = "throttle.check", subject = "name", detail = "body")
  public ThrottleResponse change(
      @PathVariable @Parameter(description = "the check's name") String name,
      @Body @Parameter(hidden = true) @Nullable String body,
      Authentication caller) {
    return throttle.change(name, body, caller.getName());
  }
}
