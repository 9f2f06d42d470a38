package dev.dripline.store.targets;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.TypeDef;
import io.micronaut.data.model.DataType;
import java.time.Instant;

/**
 * A row of {@code live_batches}: a unit of live work queued for a target, applied in id order once
 * the target is primed (spec §2, T5).
 *
 * @param id its number, in arrival order
 * @param targetName the target it belongs to (deleted with it)
 * @param payload its payload, JSON text
 * @param status queued, applied or failed
 * @param error the last error applying it, or {@code null}
 * @param createdAt when it was queued
 * @param appliedAt when it was applied, or {@code null}
 */
@MappedEntity("live_batches")
public record LiveBatchEntry(
    @Id long id,
    String targetName,
    @TypeDef(type = DataType.JSON) String payload,
    String status,
    @Nullable String error,
    Instant createdAt,
    @Nullable Instant appliedAt) {}
