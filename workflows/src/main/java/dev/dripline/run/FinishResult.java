package dev.dripline.run;

import java.time.Instant;

/**
 * @param finished false if a batch was still pending or holding a slot, so the run goes on
 * @param status the terminal status when finished
 * @param finishedAt when it finished
 */
public record FinishResult(boolean finished, RunStatus status, Instant finishedAt) {}
