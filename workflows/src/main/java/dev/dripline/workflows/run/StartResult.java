package dev.dripline.workflows.run;

import java.time.Instant;

/**
 * Outcome of {@link RunActivities#markRunning}.
 *
 * @param started true if the run moved from pending to running
 * @param status the status found (running if started; otherwise what stopped it, or null if gone)
 * @param startedAt when the run started
 */
public record StartResult(boolean started, RunStatus status, Instant startedAt) {}
