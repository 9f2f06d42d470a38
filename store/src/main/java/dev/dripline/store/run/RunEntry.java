package dev.dripline.store.run;

import dev.dripline.workflows.run.RunWorkflowIds;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.TypeDef;
import io.micronaut.data.model.DataType;
import java.time.Instant;

/**
 * A row of {@code runs} (spec §2, R1–R8), as stored: the columns the API writes or reads. The
 * planner's cursor columns belong to the run's workflow activities. Reads that need the run's
 * computed columns (processed keys, whether it is stopping) use {@link RunView}.
 *
 * @param id the run's id, drawn by {@link RunRepository#nextId} before its insert
 * @param backfill the definition's name
 * @param options normalized options, JSON
 * @param optionsKey the canonical JSON of the options: identical runs have identical keys (R3)
 * @param batchSize keys per batch
 * @param maxRecords cap on keys for trial runs, or {@code null}
 * @param requestedMaxParallelBatches the cap the run asked for, or {@code null}
 * @param maxParallelBatches the effective cap
 * @param startAt the scheduled start, or {@code null}
 * @param createdBy who created it
 * @param status pending, running, paused, completed, failed or stopped
 * @param error why it failed, if it did
 * @param idempotencyKey the creating request's {@code Idempotency-Key}, or {@code null}
 * @param workflowId the Temporal workflow id behind it ({@link RunWorkflowIds#forRun})
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param planDone whether planning has reached the end of the run's scope
 * @param stopRequestedAt when a stop was asked for, or {@code null}
 * @param createdAt when it was created
 * @param updatedAt when it last changed
 * @param startedAt when it started running
 * @param finishedAt when it ended
 */
@MappedEntity("runs")
public record RunEntry(
    @Id long id,
    String backfill,
    @TypeDef(type = DataType.JSON) String options,
    String optionsKey,
    int batchSize,
    @Nullable Long maxRecords,
    @Nullable Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    @Nullable Instant startAt,
    @Nullable String createdBy,
    String status,
    @Nullable String error,
    @Nullable String idempotencyKey,
    @Nullable String workflowId,
    @Nullable Long totalKeys,
    boolean planDone,
    @Nullable Instant stopRequestedAt,
    Instant createdAt,
    Instant updatedAt,
    @Nullable Instant startedAt,
    @Nullable Instant finishedAt) {}
