package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A {@code runs} row as the run's workflow loads it ({@link RunRepository#findSettings}): what it
 * needs to go on running the run, with the definition's cap and the run's processed keys read in
 * the same statement.
 *
 * @param backfill the definition's name
 * @param status its status, as stored
 * @param batchSize keys per batch
 * @param requestedMaxParallelBatches the cap the run asked for, or {@code null}
 * @param maxParallelBatches the run's effective cap, as recorded
 * @param definitionCap the definition's cap, or {@code null} (no cap, or no such definition)
 * @param startAt the scheduled start, or {@code null}
 * @param startedAt when it started running, or {@code null}
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param planDone whether planning has reached the end of the run's scope
 * @param stopRequested whether a stop of the run was recorded
 * @param processedKeys sum of completed batch sizes, from the run's sharded counters
 * @param failureBudgetSpent whether the run's failure budget is spent (P6b)
 */
@Introspected
public record RunSettingsView(
    String backfill,
    String status,
    int batchSize,
    @Nullable Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    @Nullable Integer definitionCap,
    @Nullable Instant startAt,
    @Nullable Instant startedAt,
    @Nullable Long totalKeys,
    boolean planDone,
    boolean stopRequested,
    long processedKeys,
    boolean failureBudgetSpent) {}
