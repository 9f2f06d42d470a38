package dev.dripline.workflows.metrics;

/**
 * @param intervalMillis time between two snapshots
 */
public record MetricsInput(long intervalMillis) {}
