package dev.dripline.app.pool;

import dev.dripline.app.audit.Audited;
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
import java.util.List;

/**
 * The pools API (P5): {@code GET /api/pools} lists them (viewer and operator), {@code PUT
 * /api/pools/{name} {size}} creates or resizes one (operator). Bodies are taken as text and bound
 * by {@link dev.dripline.app.request.BodyReader}, so a 400 names every bad field.
 */
@Requires(notEnv = "worker")
@Controller("/api/pools")
@ExecuteOn(TaskExecutors.BLOCKING)
public class PoolController {
  private final PoolService pools;

  public PoolController(PoolService pools) {
    this.pools = pools;
  }

  @Get
  public List<PoolResponse> list() {
    return pools.list();
  }

  @Put("/{name}")
  @Consumes(MediaType.APPLICATION_JSON)
  @Audited(value = "pool.put", subject = "name", detail = "body")
  public PoolResponse put(@PathVariable String name, @Body @Nullable String body) {
    return pools.put(name, body);
  }
}
