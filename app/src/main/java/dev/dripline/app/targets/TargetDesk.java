package dev.dripline.app.targets;

import dev.dripline.app.run.PageResponse;
import io.micronaut.data.model.Page;
import jakarta.inject.Singleton;

/**
 * The targets the dashboard ({@code dev.dripline.app.ui}) shows: as the targets API shows them
 * ({@link TargetResponse}), failing ones first, then stuck ones.
 */
@Singleton
public class TargetDesk {
  private final TargetRecords targets;

  public TargetDesk(TargetRecords targets) {
    this.targets = targets;
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
