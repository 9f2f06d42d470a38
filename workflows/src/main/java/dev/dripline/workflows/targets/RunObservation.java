package dev.dripline.workflows.targets;

/**
 * @param name the target
 * @param runId the run the workflow believes is current
 * @param jitterDraw a uniform draw from [0, 1) for the backoff if the run failed
 */
public record RunObservation(String name, long runId, double jitterDraw) {}
