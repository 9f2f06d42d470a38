package dev.dripline.workflows.targets;

/**
 * @param acquired true if the target moved to backfilling
 * @param target the record after the attempt
 */
public record CapacityResult(boolean acquired, TargetSnapshot target) {}
