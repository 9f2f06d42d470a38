package dev.dripline.bench;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * W1's baseline: a bare Temporal workflow that runs {@code total} no-op activities with at most
 * {@code cap} in flight, continuing as new (after draining) every {@code perExecution} activities.
 */
@WorkflowInterface
public interface BareLoopWorkflow {
  /**
   * @param total activities to run over the whole chain of executions
   * @param cap activities in flight at most
   * @param done activities completed by earlier executions of the chain
   * @param perExecution activities one execution starts before it drains and continues as new
   */
  record Input(long total, int cap, long done, int perExecution) {}

  /** Returns the number of activities completed by the whole chain. */
  @WorkflowMethod(name = "BenchBareLoop")
  long run(Input input);
}
