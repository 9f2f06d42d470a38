package dev.dripline.app.targets;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.workflows.targets.FailureStreak;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;
import java.util.Map;

/**
 * A target as the API shows it ({@code GET /api/targets/{name}} and list items). Live batches are
 * blocked while the target is not primed; a primed target has none blocked, however many are still
 * queued for its drain.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param options normalized option values
 * @param group the capacity group, or {@code null}
 * @param state pending_backfill, backfilling, primed or needs_resync
 * @param consecutiveFailures the failure streak
 * @param firstFailedAt when the streak began
 * @param lastAttemptAt the last planning attempt
 * @param nextAttemptAt earliest next planning attempt
 * @param lastError the last failure's error
 * @param failing whether it counts as failing (spec T6)
 * @param currentRunId its current backfill run, or {@code null}
 * @param blockedLiveBatches queued live batches waiting for the target to be primed
 * @param oldestBlockedAgeSeconds age of the oldest blocked live batch, or {@code null} if none
 * @param createdAt when it was registered
 * @param updatedAt when it last changed
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record TargetResponse(
    String name,
    String backfill,
    Map<String, Object> options,
    String group,
    String state,
    int consecutiveFailures,
    Instant firstFailedAt,
    Instant lastAttemptAt,
    Instant nextAttemptAt,
    String lastError,
    boolean failing,
    Long currentRunId,
    long blockedLiveBatches,
    Long oldestBlockedAgeSeconds,
    Instant createdAt,
    Instant updatedAt) {

  static TargetResponse of(TargetRow target) {
    boolean blocking = target.state() != TargetState.PRIMED && target.queuedLiveBatches() > 0;
    return new TargetResponse(
        target.name(),
        target.backfill(),
        target.options(),
        target.group(),
        target.state().wire(),
        target.consecutiveFailures(),
        target.firstFailedAt(),
        target.lastAttemptAt(),
        target.nextAttemptAt(),
        target.lastError(),
        FailureStreak.isFailing(target.state(), target.consecutiveFailures()),
        target.currentRunId(),
        blocking ? target.queuedLiveBatches() : 0,
        blocking ? target.oldestQueuedAgeSeconds() : null,
        target.createdAt(),
        target.updatedAt());
  }
}
