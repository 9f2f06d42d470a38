package dev.dripline.runtime.targets;

import dev.dripline.store.targets.RunToStop;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RetryRequest;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.RunWorkflowStart;
import dev.dripline.workflows.run.SignalOrigin;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateStage;

/**
 * Stops a target's runs when the target no longer wants them — it is deleted or replanned (spec T7,
 * R7), or a new planning attempt finds runs its target left behind. A run's lifecycle is written by
 * its workflow alone: the target finds the runs to stop ({@code RunRepository.findActiveOfTarget},
 * in its own transaction) and, after that commits, {@link #deliver sends} each the {@code stop}
 * signal with start — a run whose execution is gone gets a new one, which ends it {@code stopped}.
 * A pending run ends stopped as soon as its workflow takes the signal, a running or paused one once
 * its in-flight batches end. Until then the run is still active and still the target's: a new
 * planning attempt finds it again, sends the stop again, and waits for it to end (one active run
 * per target); no later target of the same name adopts it.
 */
public final class TargetRunStops {
  private TargetRunStops() {}

  /**
   * Signals {@code stop} to the run's workflow, starting a new execution of it first if none is
   * running: a stop must also reach a run whose execution was lost.
   *
   * @throws RuntimeException if Temporal cannot be reached; nothing was sent
   */
  public static void deliver(
      WorkflowClient client, String taskQueue, String target, RunToStop run) {
    BackfillRunWorkflow stub = stub(client, taskQueue, target, run, "stopped", false);
    BatchRequest batch = client.newSignalWithStartRequest();
    batch.add(stub::run, RunWorkflowInput.fresh(run.runId()));
    batch.add(stub::stop, SignalOrigin.ENGINE);
    client.signalWithStart(batch);
  }

  /**
   * Asks the workflow of a failed or stopped run that its target retries (spec T5) to retry it, as
   * the API's retry does — the {@code retryRun} Update, starting a new execution if none is running
   * — and returns the workflow's answer once it has re-queued.
   *
   * @throws RuntimeException if Temporal cannot be reached or the Update fails
   */
  public static RetryAnswer retry(
      WorkflowClient client, String taskQueue, String target, RunToStop run) {
    BackfillRunWorkflow stub = stub(client, taskQueue, target, run, "retried", true);
    return WorkflowClient.executeUpdateWithStart(
        stub::retryRun,
        new RetryRequest(null, SignalOrigin.ENGINE),
        UpdateOptions.<RetryAnswer>newBuilder()
            .setWaitForStage(WorkflowUpdateStage.COMPLETED)
            .build(),
        new WithStartWorkflowOperation<>(stub::run, RunWorkflowInput.fresh(run.runId())));
  }

  private static BackfillRunWorkflow stub(
      WorkflowClient client,
      String taskQueue,
      String target,
      RunToStop run,
      String why,
      boolean useExisting) {
    WorkflowOptions.Builder options =
        RunWorkflowStart.options(run.runId(), taskQueue, run.backfill(), RunStatus.RUNNING, target)
            .setStaticSummary(
                run.backfill() + " · run " + run.runId() + " · " + why + " for target " + target);
    if (useExisting) {
      options.setWorkflowIdConflictPolicy(
          WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING);
    }
    return client.newWorkflowStub(BackfillRunWorkflow.class, options.build());
  }
}
