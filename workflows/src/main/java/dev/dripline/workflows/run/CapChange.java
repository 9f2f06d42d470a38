package dev.dripline.workflows.run;

/**
 * A request to change a live run's cap.
 *
 * @param maxParallelBatches the run's requested cap, at least 1
 */
public record CapChange(int maxParallelBatches) {}
