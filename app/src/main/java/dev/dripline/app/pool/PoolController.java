package dev.dripline.app.pool;

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
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Put;
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
import java.util.List;

/**
 * The pools API (P5): {@code GET /api/pools} lists them (viewer and operator), {@code PUT
 * /api/pools/{name} {size}} creates or resizes one (operator). Bodies are taken as text and bound
 * by {@link dev.dripline.app.request.BodyReader}, so a 400 names every bad field.
 */
@Requires(notEnv = "worker")
@Controller("/api/pools")
@Tag(name = "pools")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class PoolController {
  private final PoolService pools;

  public PoolController(PoolService pools) {
    this.pools = pools;
  }

  @Get
  @Operation(operationId = "listPools", summary = "Every pool by name")
  @ApiResponse(responseCode = "200", description = "the pools")
  public List<PoolResponse> list() {
    return pools.list();
  }

  @Put("/{name}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(operationId = "putPool", summary = "Create a pool or resize it")
  @RequestBody(
      description = "the pool's size",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = PoolSizeRequest.class)))
  @ApiResponses({
    @ApiResponse(
        responseCode = "200",
        description = "the pool",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = PoolResponse.class))),
    @ApiResponse(
        responseCode = "400",
        description = "a field is invalid, or the name (name)",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited(value = "pool.put", subject = "name", detail = "body")
  public PoolResponse put(
      @PathVariable
          @Parameter(
              description = "the pool's name",
              schema = @Schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"))
          String name,
      @Body @Parameter(hidden = true) @Nullable String body) {
    return pools.put(name, body);
  }
}
