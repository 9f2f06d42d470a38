package dev.dripline.workflows.targets;

/**
 * A run created by a successful planning attempt.
 *
 * @param runId the run, pending, to be started as workflow {@code dripline-run-<runId>}
 * @param backfill its definition
 * @param summary a one-line summary for the run workflow's static summary
 */
public record PlannedRun(long runId, String backfill, String summary) {}
