package dev.dripline.workflows.run;

/**
 * Result of a run workflow execution.
 *
 * @param status terminal status the run ended in, or {@code null} if the run record was gone
 * @param processedKeys keys processed by completed batches
 */
public record RunOutcome(RunStatus status, long processedKeys) {}
