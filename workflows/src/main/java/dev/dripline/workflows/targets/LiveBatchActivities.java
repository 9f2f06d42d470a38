package dev.dripline.workflows.targets;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/**
 * Applying a primed target's live batches through its definition (T5). Its activity type keeps the
 * {@code Target} prefix of every target activity.
 */
@ActivityInterface(namePrefix = "Target")
public interface LiveBatchActivities {

  /**
   * Applies up to {@code max} queued live batches of a primed target in arrival order through its
   * definition (T5). A permanent failure moves the target to needs_resync (streak at least 3).
   */
  @ActivityMethod
  LiveDrain applyLiveBatches(LiveDrainRequest request);
}
