package dev.dripline.app.run;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.problem.NotFoundProblem;
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
  @Audited(value = "run.create", detail = "body", previewWhen = "dryRun")
  public HttpResponse<?> create(
      @Body @Nullable String body,
      @Header("Idempotency-Key") @Nullable String idempotencyKey,
      @QueryValue @Nullable String dryRun,
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
  public PageResponse<RunResponse> list(
      HttpRequest<?> request,
      @QueryValue @Nullable String status,
      @QueryValue @Nullable String backfill,
      @QueryValue @Nullable String page,
      @QueryValue @Nullable String size) {
    return service.list(
        requests.runQuery(request.getParameters().names(), status, backfill, page, size));
  }

  @Get("/{id}")
  public RunResponse get(@PathVariable String id) {
    return service.get(runId(id));
  }

  @Get("/{id}/batches")
  public PageResponse<BatchResponse> batches(
      HttpRequest<?> request,
      @PathVariable String id,
      @QueryValue @Nullable String status,
      @QueryValue @Nullable String page,
      @QueryValue @Nullable String size,
      @QueryValue @Nullable String key) {
    return service.batches(
        runId(id), requests.batchQuery(request.getParameters().names(), status, page, size, key));
  }

  @Post("/{id}/stop")
  @Status(HttpStatus.ACCEPTED)
  @Audited(value = "run.stop", run = "id")
  public void stop(@PathVariable String id) {
    service.stop(runId(id));
  }

  @Post("/{id}/retry")
  @Status(HttpStatus.ACCEPTED)
  @Audited(value = "run.retry", run = "id")
  public RetryResponse retry(@PathVariable String id) {
    return new RetryResponse(service.retry(runId(id)));
  }

  @Post("/{id}/pause")
  @Status(HttpStatus.ACCEPTED)
  @Audited(value = "run.pause", run = "id")
  public void pause(@PathVariable String id) {
    service.pause(runId(id));
  }

  @Post("/{id}/resume")
  @Status(HttpStatus.ACCEPTED)
  @Audited(value = "run.resume", run = "id")
  public void resume(@PathVariable String id) {
    service.resume(runId(id));
  }

  @Patch("/{id}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Audited(value = "run.cap", run = "id", detail = "body")
  public RunResponse changeCap(@PathVariable String id, @Body @Nullable String body) {
    long runId = runId(id);
    return service.changeCap(runId, requests.capChange(body));
  }

  @Delete("/{id}")
  @Status(HttpStatus.NO_CONTENT)
  @Audited(value = "run.delete", run = "id")
  public void delete(@PathVariable String id) {
    service.delete(runId(id));
  }

  private static long runId(String id) {
    return RunRequests.runId(id).orElseThrow(() -> NotFoundProblem.run(id));
  }
}
