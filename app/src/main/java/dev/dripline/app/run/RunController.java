package dev.dripline.app.run;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.openapi.ApiParameter;
import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.Problem;
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
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.Patch;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.Status;
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
import java.net.URI;

/**
 * The runs API (spec §6.1). Each action parses its input, calls one {@link RunService} method and
 * maps the result; errors become problem documents in {@code dev.dripline.app.problem}. Bodies are
 * taken as text and bound to their records by {@link RunRequests}, not by {@code @Body}, so that
 * every bad field — a wrong type, a duplicate, a catalogue error found later by the service — is
 * reported in one 400 rather than the first as a binding failure. Ids are taken as text too: one
 * that is not a number names no run (404). The caller (micronaut-security's {@link Authentication})
 * is recorded as a run's creator.
 */
// The API is the app's: a worker process started from a classpath that holds it serves only its
// own /health and /prometheus.
@Requires(notEnv = "worker")
@Controller("/api/runs")
@Tag(name = "runs")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class RunController {
  private final RunService service;
  private final RunRequests requests;

  public RunController(RunService service, RunRequests requests) {
    this.service = service;
    this.requests = requests;
  }

  @Post
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(operationId = "createRun", summary = "Create a run, or preview one (dryRun=true)")
  @RequestBody(
      description = "the run: a backfill of the catalogue and its options",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = CreateRunRequest.class)))
  @ApiResponses({
    @ApiResponse(
        responseCode = "201",
        description = "the run, created; Location names it",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = RunResponse.class))),
    @ApiResponse(
        responseCode = "200",
        description =
            "the preview of a dry run, or the run an earlier request with the same Idempotency-Key created",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(oneOf = {DryRunResponse.class, RunResponse.class}))),
    @ApiResponse(
        responseCode = "409",
        description = "an identical run is active (existingRunId)",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class))),
    @ApiResponse(
        responseCode = "422",
        description = "the definition failed to plan (dry run)",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class))),
    @ApiResponse(
        responseCode = "503",
        description =
            "Temporal cannot be reached (nothing created), or no worker answered a dry run in time",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.InvalidFields
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited(value = "run.create", detail = "body", previewWhen = "dryRun")
  public HttpResponse<?> create(
      @Body @Parameter(hidden = true) @Nullable String body,
      @Header("Idempotency-Key")
          @Parameter(
              description = "1 to 255 characters; a repeat answers the run it created",
              schema = @Schema(minLength = 1, maxLength = 255))
          @Nullable
          String idempotencyKey,
      @QueryValue
          @Parameter(
              description = "true: validate and plan, save nothing",
              schema = @Schema(type = "boolean"))
          @Nullable
          String dryRun,
      Authentication caller) {
    if (requests.dryRun(dryRun)) {
      return HttpResponse.ok(service.dryRun(requests.create(body, null)));
    }
    CreatedRun created =
        service.create(requests.create(body, idempotencyKey), idempotencyKey, caller.getName());
    URI location = URI.create("/api/runs/" + created.run().id());
    HttpStatus status = created.created() ? HttpStatus.CREATED : HttpStatus.OK;
    return HttpResponse.<RunResponse>status(status)
        .headers(h -> h.location(location))
        .body(created.run());
  }

  @Get
  @Operation(operationId = "listRuns", summary = "A page of runs, newest first")
  @ApiResponse(responseCode = "200", description = "the page")
  @ProblemResponse.InvalidQuery
  public PageResponse<RunResponse> list(
      HttpRequest<?> request,
      @QueryValue
          @Parameter(
              description = "only runs of this status",
              schema =
                  @Schema(
                      allowableValues = {
                        "pending",
                        "running",
                        "paused",
                        "completed",
                        "failed",
                        "stopped"
                      }))
          @Nullable
          String status,
      @QueryValue @Parameter(description = "only runs of this backfill") @Nullable String backfill,
      @QueryValue @ApiParameter.Page @Nullable String page,
      @QueryValue @ApiParameter.PageSize @Nullable String size) {
    return service.list(
        requests.runQuery(request.getParameters().names(), status, backfill, page, size));
  }

  @Get("/{id}")
  @Operation(operationId = "getRun", summary = "A run with its batch counts, progress and throttle")
  @ApiResponse(
      responseCode = "200",
      description = "the run",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = RunResponse.class)))
  @ProblemResponse.NoSuchRun
  public RunResponse get(@PathVariable @ApiParameter.RunId String id) {
    return service.get(runId(id));
  }

  @Get("/{id}/batches")
  @Operation(operationId = "listBatches", summary = "A page of a run's batches in number order")
  @ApiResponses({
    @ApiResponse(responseCode = "200", description = "the page"),
    @ApiResponse(
        responseCode = "400",
        description = "an unknown or invalid query parameter, or a key of the wrong type",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.NoSuchRun
  public PageResponse<BatchResponse> batches(
      HttpRequest<?> request,
      @PathVariable @ApiParameter.RunId String id,
      @QueryValue
          @Parameter(
              description = "only batches of this status",
              schema =
                  @Schema(
                      allowableValues = {
                        "pending",
                        "enqueued",
                        "running",
                        "completed",
                        "failed",
                        "stopped"
                      }))
          @Nullable
          String status,
      @QueryValue @ApiParameter.Page @Nullable String page,
      @QueryValue @ApiParameter.PageSize @Nullable String size,
      @QueryValue
          @Parameter(
              description =
                  "JSON of a key of the run (a bare string is a string): the batch that holds it")
          @Nullable
          String key) {
    return service.batches(
        runId(id), requests.batchQuery(request.getParameters().names(), status, page, size, key));
  }

  @Post("/{id}/stop")
  @Status(HttpStatus.ACCEPTED)
  @Operation(operationId = "stopRun", summary = "Stop a run: no new batch starts")
  @ApiResponse(
      responseCode = "202",
      description =
          "the stop is sent; a pending run's is recorded first and holds while Temporal is"
              + " unreachable (R2)")
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @ProblemResponse.RunEnded
  @ProblemResponse.TemporalUnreachable
  @Audited(value = "run.stop", run = "id")
  public void stop(@PathVariable @ApiParameter.RunId String id) {
    service.stop(runId(id));
  }

  @Post("/{id}/retry")
  @Status(HttpStatus.ACCEPTED)
  @Operation(
      operationId = "retryRun",
      summary = "Re-queue a run's failed (and, once stopped, stopped) batches")
  @ApiResponses({
    @ApiResponse(
        responseCode = "202",
        description = "the batches re-queued",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = RetryResponse.class))),
    @ApiResponse(
        responseCode = "409",
        description = "the run is pending or completed, has nothing to re-queue, or is stopping",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @ProblemResponse.NoWorkerAnswered
  @Audited(value = "run.retry", run = "id")
  public RetryResponse retry(@PathVariable @ApiParameter.RunId String id) {
    return new RetryResponse(service.retry(runId(id)));
  }

  @Post("/{id}/pause")
  @Status(HttpStatus.ACCEPTED)
  @Operation(
      operationId = "pauseRun",
      summary = "Pause a run: in-flight batches finish, pending ones wait")
  @ApiResponses({
    @ApiResponse(responseCode = "202", description = "the pause is sent"),
    @ApiResponse(
        responseCode = "409",
        description = "the run is neither pending nor running",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @ProblemResponse.TemporalUnreachable
  @Audited(value = "run.pause", run = "id")
  public void pause(@PathVariable @ApiParameter.RunId String id) {
    service.pause(runId(id));
  }

  @Post("/{id}/resume")
  @Status(HttpStatus.ACCEPTED)
  @Operation(operationId = "resumeRun", summary = "Resume a paused run")
  @ApiResponses({
    @ApiResponse(responseCode = "202", description = "the resume is sent"),
    @ApiResponse(
        responseCode = "409",
        description = "the run is not paused",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @ProblemResponse.TemporalUnreachable
  @Audited(value = "run.resume", run = "id")
  public void resume(@PathVariable @ApiParameter.RunId String id) {
    service.resume(runId(id));
  }

  @Patch("/{id}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(operationId = "changeRunCap", summary = "Change a pending or live run's cap")
  @RequestBody(
      description = "the new cap",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = CapChangeRequest.class)))
  @ApiResponse(
      responseCode = "200",
      description = "the run, its cap recorded",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = RunResponse.class)))
  @ProblemResponse.InvalidField
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @ProblemResponse.RunEnded
  @ProblemResponse.JsonBodyRefused
  @ProblemResponse.NoWorkerAnswered
  @Audited(value = "run.cap", run = "id", detail = "body")
  public RunResponse changeCap(
      @PathVariable @ApiParameter.RunId String id,
      @Body @Parameter(hidden = true) @Nullable String body) {
    long runId = runId(id);
    return service.changeCap(runId, requests.capChange(body));
  }

  @Delete("/{id}")
  @Status(HttpStatus.NO_CONTENT)
  @Operation(operationId = "deleteRun", summary = "Delete a pending or ended run and its batches")
  @ApiResponses({
    @ApiResponse(responseCode = "204", description = "deleted"),
    @ApiResponse(
        responseCode = "409",
        description = "the run is running or paused",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchRun
  @Audited(value = "run.delete", run = "id")
  public void delete(@PathVariable @ApiParameter.RunId String id) {
    service.delete(runId(id));
  }

  private static long runId(String id) {
    return RunRequests.runId(id).orElseThrow(() -> NotFoundProblem.run(id));
  }
}
