package dev.dripline.app.targets;

import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.run.PageResponse;
import io.micronaut.data.model.Page;
import jakarta.inject.Singleton;

/**
 * The targets the dashboard ({@code dev.dripline.app.ui}) shows: as the targets API shows them
 * ({@link TargetResponse}), failing ones first, then stuck ones; and the targets API's operations
 * on one, through the same {@link TargetService} calls the {@link TargetController} makes, so a
 * page refuses what the API refuses with the API's words.
 */
@Singleton
public class TargetDesk {
  private final TargetRecords targets;
  private final TargetService service;

  public TargetDesk(TargetRecords targets, TargetService service) {
    this.targets = targets;
    this.service = service;
  }

  /** {@code POST /api/targets/{name}/replan?dryRun=true}: what a replan would do. */
  public ReplanPreview previewReplan(String name) {
    return service.previewReplan(name);
  }

  /** {@code POST /api/targets/{name}/replan}. */
  public ReplanResponse replan(String name) {
    return service.replan(name);
  }

  /** {@code DELETE /api/targets/{name}}. */
  public void delete(String name) {
    service.delete(name);
  }

  /** A target's name from a path, as the API reads it; anything no target could have is a 404. */
  public static String targetName(String text) {
    return TargetRequests.targetName(text).orElseThrow(() -> NotFoundProblem.target(text));
  }

  /**
   * A page of targets (counted from 0, as the API's), failing first, then stuck (blocked live
   * batches), then by name.
   */
  public PageResponse<TargetResponse> failingFirst(int page, int size) {
    Page<TargetRow> found = targets.listFailingFirst(page, size);
    return new PageResponse<>(
        found.getContent().stream().map(TargetResponse::of).toList(),
        page,
        size,
        found.getTotalSize());
  }
}
