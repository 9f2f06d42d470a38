package dev.dripline.app.targets;

import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.targets.TargetRunStops;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetWorkflow;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The targets API's only contact with Temporal: starting, waking and terminating targets'
 * controlling workflows, and delivering the stops of the runs a replan or a deletion cancels
 * (already recorded in the runs). PostgreSQL stays the record (the workflow polls it too), so a
 * missed wake-up only delays the workflow; a Temporal failure that matters surfaces as {@link
 * UnavailableProblem}.
 */
@Singleton
public class TargetWorkflows {
  private static final Logger log = LoggerFactory.getLogger(TargetWorkflows.class);

  private final WorkflowClient client;
  private final TemporalConfig temporal;

  public TargetWorkflows(WorkflowClient client, TemporalConfig temporal) {
    this.client = client;
    this.temporal = temporal;
  }

  /**
   * Starts the controlling workflow of a freshly registered target (one already running is kept).
   */
  void start(TargetRow target) {
    TargetWorkflow stub = client.newWorkflowStub(TargetWorkflow.class, options(target));
    try {
      WorkflowClient.start(stub::run, new TargetRef(target.name()));
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not start the workflow of target "
              + target.name()
              + " (Temporal: "
              + reason(e)
              + ")",
          e);
    }
  }

  /**
   * Signals {@code wake}, starting the workflow first if none is running, so a target whose
   * workflow was lost is revived by the next change to its record.
   */
  void wake(TargetRow target) {
    TargetWorkflow stub = client.newWorkflowStub(TargetWorkflow.class, options(target));
    try {
      BatchRequest batch = client.newSignalWithStartRequest();
      batch.add(stub::run, new TargetRef(target.name()));
      batch.add(stub::wake);
      client.signalWithStart(batch);
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not wake the workflow of target "
              + target.name()
              + " (Temporal: "
              + reason(e)
              + ")",
          e);
    }
  }

  /** Wakes without caring whether it arrives: the workflow polls the record anyway. */
  void wakeQuietly(TargetRow target) {
    try {
      wake(target);
    } catch (UnavailableProblem e) {
      log.warn("target {}: wake not delivered: {}", target.name(), e.getMessage());
    }
  }

  /**
   * Sends the stop to a target's active run, starting a new execution of its workflow if none is
   * running (one whose execution was lost is ended that way too); the run's workflow records it.
   */
  void stopRun(String target, RunToStop run) {
    try {
      TargetRunStops.deliver(client, temporal.taskQueue(), target, run);
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not signal stop to run " + run.runId() + " (Temporal: " + reason(e) + ")", e);
    }
  }

  /** Terminates the target's workflow, if any; a missing or closed one is fine. */
  void terminateQuietly(String name) {
    try {
      client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).terminate("target deleted");
    } catch (WorkflowNotFoundException e) {
      // Already closed or never started: nothing to cancel.
    } catch (RuntimeException e) {
      // The record is gone; an execution left behind finds no target and ends by itself.
      log.warn("target {}: could not terminate its workflow: {}", name, reason(e));
    }
  }

  private WorkflowOptions options(TargetRow target) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(TargetWorkflowIds.forTarget(target.name()))
        .setTaskQueue(temporal.taskQueue())
        .setWorkflowIdConflictPolicy(
            WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
        .setTypedSearchAttributes(
            SearchAttributes.newBuilder().set(RunSearchAttributes.TARGET, target.name()).build())
        .setStaticSummary(summary(target))
        .build();
  }

  /** The one-line summary the Web UI shows, e.g. "target acme · example.copy-events". */
  static String summary(TargetRow target) {
    String text = "target " + target.name() + " · " + target.backfill();
    return target.group() == null ? text : text + " · group " + target.group();
  }

  private static String reason(RuntimeException e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return String.valueOf(cause.getMessage());
  }
}
