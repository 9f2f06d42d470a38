package dev.dripline.workflows.run;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.UpdateValidatorMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * One run of one backfill definition. Its workflow id is {@code dripline-run-<runId>} ({@link
 * RunWorkflowIds}). The workflow owns the run's slots: at no instant do more batches hold a slot
 * than the effective cap. Batch and run records live in PostgreSQL; the workflow keeps only a
 * cursor and counters, and continues as new after draining its slots so history stays bounded.
 *
 * <p>The workflow is the only writer of its run's lifecycle — status, cap, stop and pause — which
 * it records through its activities. The API signals {@code stop}, {@code pause} and {@code
 * resume}, and asks {@code retryRun} and {@code changeCap} as Updates, whose answers it needs.
 *
 * <p>Signals are safe to send from the Temporal CLI: one that does not apply to the run's current
 * state is logged and ignored, never a failed workflow. The API's {@code stop}, {@code pause} and
 * {@code resume} signals and its Updates carry a {@link SignalOrigin}; a signal or Update sent
 * without one, and every {@code retry} and {@code setMaxParallelBatches} signal (Dripline sends
 * neither), is recorded in the audit trail as sent by {@code temporal}, with whether the workflow
 * took it. When the run ends failed or stopped its workflow stays open for a {@code retry} signal
 * for the engine's {@code ended-run-retry-window} (7 days by default), so the CLI and the Web UI
 * can retry it as the API does; a completed run's workflow closes at once.
 */
@WorkflowInterface
public interface BackfillRunWorkflow {

  /**
   * Runs (or, after a retry of an ended run, resumes) the run until it is completed, or until it
   * has ended failed or stopped and no retry came within the ended-run retry window.
   */
  @WorkflowMethod(name = "BackfillRun")
  RunOutcome run(RunWorkflowInput input);

  /**
   * No new batch starts; batches holding a slot finish; pending batches become stopped.
   *
   * @param origin who in Dripline sent it; {@code null} (no input) for anyone else
   */
  @SignalMethod(
      description =
          "Stop the run: no new batch starts, in-flight batches finish, pending batches become"
              + " stopped. Like POST /api/runs/{id}/stop. No input needed; recorded in Dripline's"
              + " audit trail as sent by temporal.")
  void stop(SignalOrigin origin);

  /** Re-queues failed batches (and, for a stopped run, stopped ones) through the same cap. */
  @SignalMethod(
      description =
          "Re-queue failed batches (and, for a stopped run, stopped ones) through the same cap;"
              + " also re-opens a failed or stopped run whose workflow is still open. Ignored while"
              + " the run is stopping. Like POST /api/runs/{id}/retry. Recorded in Dripline's audit"
              + " trail as sent by temporal.")
  void retry();

  /**
   * No new batch starts; in-flight ones finish; pending ones stay pending.
   *
   * @param origin who in Dripline sent it; {@code null} (no input) for anyone else
   */
  @SignalMethod(
      description =
          "Pause the run: no new batch starts, in-flight batches finish, pending ones wait."
              + " Like POST /api/runs/{id}/pause. No input needed; recorded in Dripline's audit"
              + " trail as sent by temporal.")
  void pause(SignalOrigin origin);

  /**
   * Continues a paused run.
   *
   * @param origin who in Dripline sent it; {@code null} (no input) for anyone else
   */
  @SignalMethod(
      description =
          "Continue a paused run. Like POST /api/runs/{id}/resume. No input needed; recorded in"
              + " Dripline's audit trail as sent by temporal.")
  void resume(SignalOrigin origin);

  /**
   * Retries the run as {@link #retry} does and answers how many batches were re-queued, or why
   * nothing was (the API's {@code POST /api/runs/{id}/retry}).
   */
  @UpdateMethod(
      name = "retryRun",
      description =
          "Retry the run as the retry signal does and answer {requeued, refusal, runGone}; input"
              + " {} or {\"answerByMillis\": t}. Like POST /api/runs/{id}/retry.")
  RetryAnswer retryRun(RetryRequest request);

  /** Rejects a retry Update that arrives after its caller stopped waiting. */
  @UpdateValidatorMethod(updateName = "retryRun")
  void validateRetryRun(RetryRequest request);

  /**
   * Changes the run's requested cap, records it, and answers with the cap the run now runs with
   * (the API's {@code PATCH /api/runs/{id}}).
   */
  @UpdateMethod(
      name = "changeCap",
      description =
          "Change the run's requested cap, input {\"maxParallelBatches\": n}, and answer with the"
              + " effective cap once it is recorded. Like PATCH /api/runs/{id}.")
  CapAnswer changeCap(CapUpdate update);

  /** Rejects a cap below 1, or a change that arrives after its caller stopped waiting. */
  @UpdateValidatorMethod(updateName = "changeCap")
  void validateChangeCap(CapUpdate update);

  /** Changes the run's requested cap; the effective cap stays bounded by definition and engine. */
  @SignalMethod(
      description =
          "Change the run's requested cap, input {\"maxParallelBatches\": n}; the effective cap"
              + " stays bounded by the definition and the engine. Like PATCH /api/runs/{id}."
              + " Recorded in Dripline's audit trail as sent by temporal.")
  void setMaxParallelBatches(CapChange change);

  /** The same figures as {@code GET /api/runs/{id}}. */
  @QueryMethod(
      description =
          "Progress of the run: status, totalKeys, processedKeys, percent, throughput, ETA,"
              + " in-flight batches and cap. The same figures as GET /api/runs/{id}.")
  RunProgressView progress();
}
