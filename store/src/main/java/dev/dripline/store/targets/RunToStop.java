package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;

/**
 * A run whose stop must be sent to its workflow.
 *
 * @param runId the run's id
 * @param backfill the definition's name
 */
@Introspected
public record RunToStop(long runId, String backfill) {}
