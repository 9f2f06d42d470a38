package dev.dripline.workflows.run;

/**
 * What the {@code progress} query returns: status, slots in use and {@link RunProgress}.
 *
 * @param runId the run
 * @param status the run's status as the workflow sees it
 * @param inFlight batches holding a slot
 * @param maxParallelBatches the effective cap
 * @param progress the progress figures
 */
public record RunProgressView(
    long runId, RunStatus status, int inFlight, int maxParallelBatches, RunProgress progress) {}
