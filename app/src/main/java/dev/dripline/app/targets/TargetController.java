package dev.dripline.app.targets;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.problem.NotFoundProblem;
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
  @Audited(value = "target.create", detail = "body")
  public HttpResponse<TargetResponse> create(@Body @Nullable String body) {
    TargetResponse target = service.create(requests.create(body));
    URI location = URI.create("/api/targets/" + target.name());
    return HttpResponse.<TargetResponse>status(HttpStatus.CREATED)
        .headers(h -> h.location(location))
        .body(target);
  }

  @Get
  public PageResponse<TargetResponse> list(
      HttpRequest<?> request,
      @QueryValue @Nullable String state,
      @QueryValue @Nullable String group,
      @QueryValue @Nullable String page,
      @QueryValue @Nullable String size) {
    return service.list(
        requests.targetQuery(request.getParameters().names(), state, group, page, size));
  }

  @Get("/{name}")
  public TargetResponse get(@PathVariable String name) {
    return service.get(targetName(name));
  }

  @Post("/{name}/live-batches")
  @Consumes(MediaType.APPLICATION_JSON)
  @Status(HttpStatus.ACCEPTED)
  public LiveBatchResponse queueLiveBatch(@PathVariable String name, @Body @Nullable String body) {
    return service.queueLiveBatch(targetName(name), requests.liveBatchPayload(body));
  }

  /** A dry run answers 200 with what would happen; a replan answers 202 with what was done. */
  @Post("/{name}/replan")
  @Audited(value = "target.replan", target = "name", previewWhen = "dryRun")
  public HttpResponse<?> replan(
      HttpRequest<?> request, @PathVariable String name, @QueryValue @Nullable String dryRun) {
    String target = targetName(name);
    if (TargetRequests.dryRun(request.getParameters().names(), dryRun)) {
      return HttpResponse.ok(service.previewReplan(target));
    }
    return HttpResponse.accepted().body(service.replan(target));
  }

  @Delete("/{name}")
  @Status(HttpStatus.NO_CONTENT)
  @Audited(value = "target.delete", target = "name")
  public void delete(@PathVariable String name) {
    service.delete(targetName(name));
  }

  private static String targetName(String name) {
    return TargetRequests.targetName(name).orElseThrow(() -> NotFoundProblem.target(name));
  }
}
