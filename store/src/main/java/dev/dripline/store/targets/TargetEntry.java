package dev.dripline.store.targets;

import dev.dripline.workflows.targets.TargetSnapshot;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.TypeDef;
import io.micronaut.data.model.DataType;
import java.time.Instant;

/**
 * A row of {@code targets} (spec §2, T1–T8), as stored. The workflow's view of it is a {@link
 * TargetSnapshot}; the API's a response record of its own. Reads that need the target's queue of
 * live batches or the database's clock use {@link TargetWithQueue}.
 *
 * @param name the target's name (its key)
 * @param backfill the definition's name
 * @param options normalized options, JSON text
 * @param groupName the capacity group, or {@code null}
 * @param state pending_backfill, backfilling, primed or needs_resync
 * @param consecutiveFailures the failure streak
 * @param firstFailedAt when the streak began
 * @param lastError the last failure's error
 * @param lastAttemptAt the last planning attempt
 * @param nextAttemptAt earliest next planning attempt: the backoff's own anchor (T3)
 * @param currentRunId its current run, or {@code null}
 * @param observedProcessedKeys processed keys of the current run when last observed (T4)
 * @param retryRunId the failed run its next attempt retries (T5), or {@code null}
 * @param attemptId the planning attempt its capacity slot was taken for, or {@code null}
 * @param waitingSince when it last entered pending_backfill: its place in line (T1)
 * @param createdAt when it was registered
 * @param updatedAt when it last changed
 * @param primedAt when its run last completed
 */
@MappedEntity("targets")
public record TargetEntry(
    @Id String name,
    String backfill,
    @TypeDef(type = DataType.JSON) String options,
    @Nullable String groupName,
    String state,
    int consecutiveFailures,
    @Nullable Instant firstFailedAt,
    @Nullable String lastError,
    @Nullable Instant lastAttemptAt,
    @Nullable Instant nextAttemptAt,
    @Nullable Long currentRunId,
    long observedProcessedKeys,
    @Nullable Long retryRunId,
    @Nullable Long attemptId,
    Instant waitingSince,
    Instant createdAt,
    Instant updatedAt,
    @Nullable Instant primedAt) {}
