package dev.dripline.standalone;

import dev.dripline.workflows.run.RunWorkflowIds;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.common.WorkflowExecutionHistory;
import java.util.ArrayList;
import java.util.List;

/** The executions of a run's workflow, as Temporal keeps them. */
final class RunExecutions {
  private RunExecutions() {}

  /** Every execution of run {@code runId}'s workflow, first to last, following continue-as-new. */
  static List<WorkflowExecutionHistory> all(WorkflowClient temporal, long runId) {
    String workflowId = RunWorkflowIds.forRun(runId);
    String executionId =
        temporal
            .fetchHistory(workflowId)
            .getEvents()
            .get(0)
            .getWorkflowExecutionStartedEventAttributes()
            .getFirstExecutionRunId();
    List<WorkflowExecutionHistory> forward = new ArrayList<>();
    while (true) {
      WorkflowExecutionHistory history = temporal.fetchHistory(workflowId, executionId);
      forward.add(history);
      HistoryEvent last = history.getLastEvent();
      if (!last.hasWorkflowExecutionContinuedAsNewEventAttributes()) {
        return forward;
      }
      executionId = last.getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId();
    }
  }
}
