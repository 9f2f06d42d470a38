package dev.dripline.workflows.run;

/**
 * A retry's re-queue of a run's batches (R8).
 *
 * @param runId the run
 * @param token names this one re-queue (the workflow execution and a counter of its re-queues): a
 *     call repeated with the same token — its local activity run again after a lost workflow task,
 *     or its answer lost — answers what the first call did instead of re-queueing nothing; null for
 *     none (every call re-queues)
 */
public record RequeueRequest(long runId, String token) {}
