package dev.dripline.workflows.run;

/**
 * A retry asked for as an Update ({@link BackfillRunWorkflow#retryRun}).
 *
 * @param answerByMillis when (epoch milliseconds) the caller stops waiting for the answer; an
 *     Update a worker sees only later is rejected unapplied, so a caller that gave up (503) leaves
 *     nothing behind. {@code null}: no deadline (the Temporal CLI)
 */
public record RetryRequest(Long answerByMillis) {}
