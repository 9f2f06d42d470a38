package dev.dripline.app.catalogue;

import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import io.micronaut.context.annotation.Requires;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.List;

/** {@code GET /api/backfills}: the catalogue of definitions a run may name. */
// The API is the app's: a worker process started from a classpath that holds it serves only its
// own /health and /prometheus.
@Requires(notEnv = "worker")
@Controller("/api/backfills")
@Tag(name = "backfills")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class BackfillController {
  private final Catalogue catalogue;

  public BackfillController(Catalogue catalogue) {
    this.catalogue = catalogue;
  }

  @Get
  @Operation(operationId = "listBackfills", summary = "The catalogue of definitions a run may name")
  @ApiResponse(responseCode = "200", description = "the definitions")
  public List<BackfillResponse> list() {
    return catalogue.all().stream().map(BackfillResponse::of).toList();
  }
}
