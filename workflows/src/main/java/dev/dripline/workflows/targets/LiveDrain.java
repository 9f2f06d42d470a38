package dev.dripline.workflows.targets;

/**
 * @param applied live batches applied by this call
 * @param remaining live batches still queued
 * @param target the record after the call (needs_resync after a permanent failure)
 */
public record LiveDrain(int applied, long remaining, TargetSnapshot target) {}
