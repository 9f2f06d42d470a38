package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * What a target's planning needs of a run: which it is, of which backfill, its batch size and its
 * status.
 *
 * @param id the run's id
 * @param backfill the definition's name
 * @param batchSize keys per batch
 * @param status its status, as stored
 */
@Introspected
public record RunSummary(long id, String backfill, int batchSize, String status) {}
