package dev.dripline.app.audit;

import dev.dripline.app.openapi.ApiParameter;
import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import dev.dripline.app.problem.Problem;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.QueryParameters;
import dev.dripline.app.run.PageRequest;
import dev.dripline.app.run.PageResponse;
import dev.dripline.store.audit.AuditEvent;
import dev.dripline.store.audit.AuditEventRepository;
import dev.dripline.store.catalogue.FieldError;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.responses.ApiResponses;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The audit trail (O4): {@code GET /api/audit?run=&target=&page=&size=}, newest first, for viewers
 * and operators. Parameters are checked as every listing's are ({@link QueryParameters}): all at
 * once, unknown ones rejected, one 400 naming every bad one.
 */
@Requires(notEnv = "worker")
@Controller("/api/audit")
@Tag(name = "audit")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class AuditController {
  private static final Set<String> PARAMETERS = Set.of("run", "target", "page", "size");

  private final AuditEventRepository events;

  public AuditController(AuditEventRepository events) {
    this.events = events;
  }

  @Get
  @Operation(operationId = "listAuditEvents", summary = "A page of the audit trail, newest first")
  @ApiResponses({
    @ApiResponse(responseCode = "200", description = "the page"),
    @ApiResponse(
        responseCode = "400",
        description = "an unknown or invalid query parameter: one error each",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  public PageResponse<AuditResponse> list(
      HttpRequest<?> request,
      @QueryValue
          @Parameter(
              description = "only actions on this run",
              schema = @Schema(type = "integer", format = "int64", minimum = "1"))
          @Nullable
          String run,
      @QueryValue
          @Parameter(description = "only actions on this target", schema = @Schema(type = "string"))
          @Nullable
          String target,
      @QueryValue @ApiParameter.Page @Nullable String page,
      @QueryValue @ApiParameter.PageSize @Nullable String size) {
    List<FieldError> errors = new ArrayList<>();
    QueryParameters.unknown(request.getParameters().names(), PARAMETERS, errors);
    Long runId = null;
    if (run != null && !run.isBlank()) {
      try {
        runId = Long.parseLong(run.trim());
      } catch (NumberFormatException e) {
        // reported below, like a run id below 1
      }
      if (runId == null || runId < 1) {
        errors.add(new FieldError("run", "must be a run id (an integer of at least 1)"));
      }
    }
    String targetName = target == null || target.isBlank() ? null : target;
    QueryParameters.storable("target", targetName, errors);
    PageRequest paging = QueryParameters.paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    Pageable pageable = Pageable.from(paging.page(), paging.size());
    Page<AuditEvent> found;
    if (runId != null && targetName != null) {
      found = events.listOfRunAndTarget(runId, targetName, pageable);
    } else if (runId != null) {
      found = events.listOfRun(runId, pageable);
    } else if (targetName != null) {
      found = events.listOfTarget(targetName, pageable);
    } else {
      found = events.list(pageable);
    }
    return new PageResponse<>(
        found.getContent().stream().map(AuditResponse::of).toList(),
        paging.page(),
        paging.size(),
        found.getTotalSize());
  }
}
