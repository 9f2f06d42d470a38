package dev.dripline.workflows.run;

/**
 * A cap change asked for as an Update ({@link BackfillRunWorkflow#changeCap}).
 *
 * @param maxParallelBatches the run's new requested cap, at least 1
 * @param answerByMillis when (epoch milliseconds) the caller stops waiting for the answer, as in
 *     {@link RetryRequest}; {@code null}: no deadline
 * @param origin who in Dripline asked; {@code null} for anyone else (the Temporal CLI or Web UI),
 *     whose cap change the workflow records in the audit trail
 */
public record CapUpdate(int maxParallelBatches, Long answerByMillis, SignalOrigin origin) {}
