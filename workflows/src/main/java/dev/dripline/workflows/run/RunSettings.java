package dev.dripline.workflows.run;

import java.time.Instant;

/**
 * A run's settings and counters as recorded in PostgreSQL, plus the worker's engine settings.
 *
 * @param runId the run
 * @param found false if the run record does not exist (deleted)
 * @param backfill definition name
 * @param status recorded status
 * @param batchSize keys per batch
 * @param requestedCap the run's own {@code maxParallelBatches}, or {@code null}
 * @param definitionCap the definition's {@code maxParallelBatches}, or {@code null}
 * @param engineSafetyCap the engine's ceiling on slots per run
 * @param startAt scheduled start, or {@code null}
 * @param startedAt when the run first started, or {@code null}
 * @param totalKeys keys in scope once planned, or {@code null}
 * @param processedKeys sum of completed batch sizes
 * @param planningDone whether every key in scope has been cut into batches
 * @param batchPolicy timeouts and retries of one batch
 * @param planPageBatches batches planned per planning call
 * @param maxBatchesPerExecution batches started before the workflow drains and continues as new
 * @param chainMillis how long one batch activity may chain further batches (0: never)
 * @param stopRequested whether a stop of the run is recorded ({@code runs.stop_requested_at}), so
 *     that a new execution of a live run goes on stopping it
 * @param endedRunRetryWindowMillis how long the workflow of a run that ended failed or stopped
 *     waits for a {@code retry} signal before it completes (0: it completes at once)
 * @param failureBudgetSpent whether the run's failure budget is spent (P6b): a paused run whose
 *     budget is spent paused itself for it; false in results recorded before budgets existed
 */
public record RunSettings(
    long runId,
    boolean found,
    String backfill,
    RunStatus status,
    int batchSize,
    Integer requestedCap,
    Integer definitionCap,
    int engineSafetyCap,
    Instant startAt,
    Instant startedAt,
    Long totalKeys,
    long processedKeys,
    boolean planningDone,
    BatchPolicy batchPolicy,
    int planPageBatches,
    int maxBatchesPerExecution,
    long chainMillis,
    boolean stopRequested,
    long endedRunRetryWindowMillis,
    boolean failureBudgetSpent) {

  public static RunSettings notFound(long runId) {
    return new RunSettings(
        runId, false, null, null, 0, null, null, 0, null, null, null, 0, false, null, 0, 0, 0,
        false, 0, false);
  }

  /** The effective cap (spec R5). */
  public int effectiveCap() {
    return CapPolicy.effective(definitionCap, requestedCap, engineSafetyCap);
  }
}
