package dev.dripline.workflows.retention;

/**
 * One purge call's request.
 *
 * @param budgetMillis how long the call purges before it hands back to its workflow
 */
public record PurgeRequest(long budgetMillis) {}
