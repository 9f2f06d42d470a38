package dev.dripline.app.targets;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.openapi.ApiParameter;
import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.Problem;
import dev.dripline.app.run.PageResponse;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Delete;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.Status;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.parameters.RequestBody;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.responses.ApiResponses;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.net.URI;

/**
 * The targets API (spec §6.1). Each action parses its input, calls one {@link TargetService} method
 * and maps the result; errors become problem documents in {@code dev.dripline.app.problem}. Bodies
 * are taken as text and bound to their records by {@link TargetRequests}, as the runs API does, so
 * every bad field is reported in one 400. A name in a path that no target could have names no
 * target (404).
 */
// The API is the app's: a worker process started from a classpath that holds it serves only its
// own /health and /prometheus.
@Requires(notEnv = "worker")
@Controller("/api/targets")
@Tag(name = "targets")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class TargetController {
  private final TargetService service;
  private final TargetRequests requests;

  public TargetController(TargetService service, TargetRequests requests) {
    this.service = service;
    this.requests = requests;
  }

  @Post
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(operationId = "createTarget", summary = "Register a target and start its workflow")
  @RequestBody(
      description = "the target: its name, a backfill of the catalogue and its options",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = CreateTargetRequest.class)))
  @ApiResponses({
    @ApiResponse(
        responseCode = "201",
        description = "the target, registered; Location names it",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = TargetResponse.class))),
    @ApiResponse(
        responseCode = "409",
        description = "a target of that name exists",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class))),
    @ApiResponse(
        responseCode = "503",
        description = "Temporal cannot be reached; nothing registered",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.InvalidFields
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited(value = "target.create", detail = "body")
  public HttpResponse<TargetResponse> create(
      @Body @Parameter(hidden = true) @Nullable String body) {
    TargetResponse target = service.create(requests.create(body));
    URI location = URI.create("/api/targets/" + target.name());
    return HttpResponse.<TargetResponse>status(HttpStatus.CREATED)
        .headers(h -> h.location(location))
        .body(target);
  }

  @Get
  @Operation(operationId = "listTargets", summary = "A page of targets by name")
  @ApiResponse(responseCode = "200", description = "the page")
  @ProblemResponse.InvalidQuery
  public PageResponse<TargetResponse> list(
      HttpRequest<?> request,
      @QueryValue
          @Parameter(
              description = "only targets in this state",
              schema =
                  @Schema(
                      allowableValues = {
                        "pending_backfill",
                        "backfilling",
                        "primed",
                        "needs_resync"
                      }))
          @Nullable
          String state,
      @QueryValue @Parameter(description = "only targets of this group") @Nullable String group,
      @QueryValue @ApiParameter.Page @Nullable String page,
      @QueryValue @ApiParameter.PageSize @Nullable String size) {
    return service.list(
        requests.targetQuery(request.getParameters().names(), state, group, page, size));
  }

  @Get("/{name}")
  @Operation(operationId = "getTarget", summary = "A target with its state and failure streak")
  @ApiResponse(
      responseCode = "200",
      description = "the target",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = TargetResponse.class)))
  @ProblemResponse.NoSuchTarget
  public TargetResponse get(@PathVariable @ApiParameter.TargetName String name) {
    return service.get(targetName(name));
  }

  @Post("/{name}/live-batches")
  @Consumes(MediaType.APPLICATION_JSON)
  @Status(HttpStatus.ACCEPTED)
  @Operation(
      operationId = "queueLiveBatch",
      summary = "Queue a live batch, applied in order once the target is primed")
  @RequestBody(
      description = "the live batch's work",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = LiveBatchRequest.class)))
  @ApiResponse(
      responseCode = "202",
      description = "queued",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = LiveBatchResponse.class)))
  @ProblemResponse.InvalidField
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchTarget
  @ProblemResponse.JsonBodyRefused
  public LiveBatchResponse queueLiveBatch(
      @PathVariable @ApiParameter.TargetName String name,
      @Body @Parameter(hidden = true) @Nullable String body) {
    return service.queueLiveBatch(targetName(name), requests.liveBatchPayload(body));
  }

  /** A dry run answers 200 with what would happen; a replan answers 202 with what was done. */
  @Post("/{name}/replan")
  @Operation(
      operationId = "replanTarget",
      summary = "Stop a target's run and return it to pending_backfill")
  @ApiResponses({
    @ApiResponse(
        responseCode = "200",
        description = "dryRun=true: what a replan would do",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = ReplanPreview.class))),
    @ApiResponse(
        responseCode = "202",
        description = "replanned",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = ReplanResponse.class))),
    @ApiResponse(
        responseCode = "503",
        description = "the cancelled run could not be told to stop (the replan stands)",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.InvalidQuery
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchTarget
  @Audited(value = "target.replan", target = "name", previewWhen = "dryRun")
  public HttpResponse<?> replan(
      HttpRequest<?> request,
      @PathVariable @ApiParameter.TargetName String name,
      @QueryValue
          @Parameter(
              description = "true: report what would happen, change nothing",
              schema = @Schema(type = "boolean"))
          @Nullable
          String dryRun) {
    String target = targetName(name);
    if (TargetRequests.dryRun(request.getParameters().names(), dryRun)) {
      return HttpResponse.ok(service.previewReplan(target));
    }
    return HttpResponse.accepted().body(service.replan(target));
  }

  @Delete("/{name}")
  @Status(HttpStatus.NO_CONTENT)
  @Operation(
      operationId = "deleteTarget",
      summary = "Remove a target and its live batches, stop its run")
  @ApiResponses({
    @ApiResponse(responseCode = "204", description = "removed"),
    @ApiResponse(
        responseCode = "503",
        description = "Temporal cannot be reached to stop its run; nothing removed",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchTarget
  @Audited(value = "target.delete", target = "name")
  public void delete(@PathVariable @ApiParameter.TargetName String name) {
    service.delete(targetName(name));
  }

  private static String targetName(String name) {
    return TargetRequests.targetName(name).orElseThrow(() -> NotFoundProblem.target(name));
  }
}
