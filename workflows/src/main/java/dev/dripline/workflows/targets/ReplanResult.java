package dev.dripline.workflows.targets;

/**
 * @param found false if the target does not exist
 * @param previousState the state before
 * @param previousFailures the streak before
 * @param cancelledRunId the run that was (or, in a dry run, would be) stopped, or {@code null}
 */
public record ReplanResult(
    boolean found, TargetState previousState, int previousFailures, Long cancelledRunId) {}
