package dev.dripline.workflows.targets;

/** Apply up to {@code max} queued live batches of target {@code name}. */
public record LiveDrainRequest(String name, int max) {}
