package dev.dripline.workflows.run;

/**
 * A retry asked for as an Update ({@link BackfillRunWorkflow#retryRun}).
 *
 * @param answerByMillis when (epoch milliseconds) the caller stops waiting for the answer; an
 *     Update a worker sees only later is rejected unapplied, so a caller that gave up (503) leaves
 *     nothing behind. {@code null}: no deadline (the Temporal CLI)
 * @param origin who in Dripline asked; {@code null} for anyone else (the Temporal CLI or Web UI),
 *     whose retry the workflow records in the audit trail
 */
public record RetryRequest(Long answerByMillis, SignalOrigin origin) {}
