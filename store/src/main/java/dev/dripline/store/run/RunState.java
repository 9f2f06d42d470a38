package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A run's lifecycle columns, read under the run row's lock ({@link RunRepository#lock}) by the
 * statements that decide how a run ends or is retried, so nothing changes them until they commit.
 *
 * @param status its status, as stored
 * @param planDone whether planning has reached the end of the run's scope
 * @param stopRequested whether a stop of the run was recorded
 * @param backfill the definition's name
 * @param finishedAt when it ended, or {@code null}
 * @param processedKeys sum of completed batch sizes, from the run's sharded counters
 * @param lastRequeueToken the token of the last re-queue applied to it, or {@code null}
 * @param lastRequeueCount the batches that re-queue moved back to pending, or {@code null}
 */
@Introspected
public record RunState(
    String status,
    boolean planDone,
    boolean stopRequested,
    String backfill,
    @Nullable Instant finishedAt,
    long processedKeys,
    @Nullable String lastRequeueToken,
    @Nullable Integer lastRequeueCount) {}
