package dev.dripline.workflows.targets;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * The controlling workflow of one target, id {@code dripline-target-<name>}. It drives the target's
 * lifecycle from its PostgreSQL record, which stays the source of truth (the API changes it too and
 * then wakes the workflow): waits out the planner backoff, takes a capacity slot, plans (starting a
 * normal backfill run), watches the run, and once primed applies live batches in arrival order. It
 * never gives up on a failing target; it continues as new to keep its history bounded and ends only
 * when the target is deleted.
 */
@WorkflowInterface
public interface TargetWorkflow {

  @WorkflowMethod(name = "Target")
  void run(TargetRef target);

  /** The record changed (live batch queued, operator replan, …): look again now. */
  @SignalMethod(
      description =
          "Look at the target's PostgreSQL record again now (e.g. after a live batch was queued).")
  void wake();

  /**
   * Operator replan (spec T7): cancels the current run, resets the streak and its anchors and
   * returns the target to pending_backfill. The same as {@code POST /api/targets/{name}/replan}.
   */
  @SignalMethod(
      description =
          "Operator replan: stop the current run, reset the failure streak and return the target"
              + " to pending_backfill. Like POST /api/targets/{name}/replan.")
  void replan();

  /** Streak and backlog as the workflow last read them. */
  @QueryMethod(
      description =
          "The target's state, failure streak, next attempt and live-batch backlog, as the"
              + " workflow last read them.")
  TargetView status();
}
