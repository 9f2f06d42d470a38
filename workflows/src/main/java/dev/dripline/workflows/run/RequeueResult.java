package dev.dripline.workflows.run;

/**
 * @param requeued batches moved back to pending
 * @param status the run's status after the re-queue
 */
public record RequeueResult(int requeued, RunStatus status) {}
