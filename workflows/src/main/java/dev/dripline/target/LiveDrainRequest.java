package dev.dripline.target;

/** Apply up to {@code max} queued live batches of target {@code name}. */
public record LiveDrainRequest(String name, int max) {}
