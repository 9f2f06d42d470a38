package dev.dripline.store.retention;

import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code run_purges} (migration V40): a deleted run whose batches are still to be purged,
 * written by a trigger in the transaction that deleted the run.
 *
 * @param runId the deleted run's id
 * @param deletedAt when it was deleted
 */
@MappedEntity("run_purges")
public record RunPurge(@Id long runId, Instant deletedAt) {}
