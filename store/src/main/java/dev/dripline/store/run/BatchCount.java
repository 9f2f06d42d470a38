package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * How many of a run's batches are in one status ({@link BatchRepository#counts}).
 *
 * @param runId the run
 * @param status the status, as stored
 * @param batches its batches in that status, more than 0
 */
@Introspected
public record BatchCount(long runId, String status, long batches) {}
