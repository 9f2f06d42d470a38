package dev.dripline.workflows.run;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.WorkflowReplayer;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;

/**
 * Replays a recorded history of the run workflow against today's code, on a worker whose deadlock
 * detector allows a workflow task a minute instead of one second: on a busy machine the first task
 * of a replay (building Jackson's serializers) has taken longer than a second, and a {@code
 * PotentialDeadlockException} then failed a test about determinism for a reason of speed.
 */
public final class Replays {
  private static final long DEADLOCK_DETECTION_MILLIS = 60_000;

  private Replays() {}

  static void replay(WorkflowExecutionHistory history) throws Exception {
    replay(history, BackfillRunWorkflowImpl.class);
  }

  /** Replays {@code history} on a worker of {@code workflows}. */
  public static void replay(WorkflowExecutionHistory history, Class<?>... workflows)
      throws Exception {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      Worker worker =
          env.newWorker(
              "replay",
              WorkerOptions.newBuilder()
                  .setDefaultDeadlockDetectionTimeout(DEADLOCK_DETECTION_MILLIS)
                  .build());
      worker.registerWorkflowImplementationTypes(workflows);
      WorkflowReplayer.replayWorkflowExecution(history, worker);
    }
  }
}
