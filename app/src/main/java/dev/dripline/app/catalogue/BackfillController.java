package dev.dripline.app.catalogue;

import io.micronaut.context.annotation.Requires;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import java.util.List;

/** {@code GET /api/backfills}: the catalogue of definitions a run may name. */
// The API is the app's: a worker process started from a classpath that holds it serves only its
// own /health and /prometheus.
@Requires(notEnv = "worker")
@Controller("/api/backfills")
@ExecuteOn(TaskExecutors.BLOCKING)
public class BackfillController {
  private final Catalogue catalogue;

  public BackfillController(Catalogue catalogue) {
    this.catalogue = catalogue;
  }

  @Get
  public List<BackfillResponse> list() {
    return catalogue.all().stream().map(BackfillResponse::of).toList();
  }
}
