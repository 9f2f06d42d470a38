package dev.dripline.bench;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse;
import io.temporal.api.workflowservice.v1.WorkflowServiceGrpc;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * History sizes of workflow executions, read from Temporal: visibility ({@code
 * ListWorkflowExecutions}, which the dev server's SQLite visibility answers with each execution's
 * {@code history_length} and {@code history_size_bytes}) for closed executions, {@code
 * DescribeWorkflowExecution} for running ones (whose visibility record is written at start and not
 * kept current), and {@code GetWorkflowExecutionHistory} to count one execution's events exactly.
 */
final class W3History {
  private final WorkflowServiceStubs stubs;
  private final String namespace;

  W3History(WorkflowServiceStubs stubs, String namespace) {
    this.stubs = stubs;
    this.namespace = namespace;
  }

  /**
   * One workflow execution.
   *
   * @param workflowId its workflow id
   * @param runId its Temporal run id (one per execution of a continue-as-new chain)
   * @param type its workflow type
   * @param running whether it is still open
   * @param events its history length
   * @param bytes its history size
   */
  record Execution(
      String workflowId, String runId, String type, boolean running, long events, long bytes) {}

  /** Every execution the visibility query matches; running ones measured by describe. */
  List<Execution> list(String query) {
    List<Execution> executions = new ArrayList<>();
    ByteString token = ByteString.EMPTY;
    do {
      ByteString pageToken = token;
      ListWorkflowExecutionsResponse page =
          call(
              stub ->
                  stub.listWorkflowExecutions(
                      ListWorkflowExecutionsRequest.newBuilder()
                          .setNamespace(namespace)
                          .setQuery(query)
                          .setPageSize(1000)
                          .setNextPageToken(pageToken)
                          .build()));
      for (WorkflowExecutionInfo info : page.getExecutionsList()) {
        boolean running =
            info.getStatus() == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
        if (running) {
          info = describe(info.getExecution());
          running = info.getStatus() == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
        }
        executions.add(
            new Execution(
                info.getExecution().getWorkflowId(),
                info.getExecution().getRunId(),
                info.getType().getName(),
                running,
                info.getHistoryLength(),
                info.getHistorySizeBytes()));
      }
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return executions;
  }

  private WorkflowExecutionInfo describe(WorkflowExecution execution) {
    return call(stub ->
            stub.describeWorkflowExecution(
                DescribeWorkflowExecutionRequest.newBuilder()
                    .setNamespace(namespace)
                    .setExecution(execution)
                    .build()))
        .getWorkflowExecutionInfo();
  }

  /** The events of one execution, counted by reading its whole history. */
  long countEvents(String workflowId, String runId) {
    return summarise(workflowId, runId).events();
  }

  /**
   * What one execution's history holds: its events, workflow tasks completed, timers started and
   * activities scheduled by activity type.
   */
  record Summary(long events, long workflowTasks, long timers, Map<String, Long> activities) {}

  /** Reads one execution's whole history ({@code runId} empty: the latest execution). */
  Summary summarise(String workflowId, String runId) {
    long events = 0;
    long workflowTasks = 0;
    long timers = 0;
    Map<String, Long> activities = new TreeMap<>();
    ByteString token = ByteString.EMPTY;
    do {
      ByteString pageToken = token;
      GetWorkflowExecutionHistoryResponse page =
          call(
              stub ->
                  stub.getWorkflowExecutionHistory(
                      GetWorkflowExecutionHistoryRequest.newBuilder()
                          .setNamespace(namespace)
                          .setExecution(
                              WorkflowExecution.newBuilder()
                                  .setWorkflowId(workflowId)
                                  .setRunId(runId)
                                  .build())
                          .setMaximumPageSize(1000)
                          .setNextPageToken(pageToken)
                          .build()));
      for (HistoryEvent event : page.getHistory().getEventsList()) {
        events++;
        switch (event.getEventType()) {
          case EVENT_TYPE_WORKFLOW_TASK_COMPLETED -> workflowTasks++;
          case EVENT_TYPE_TIMER_STARTED -> timers++;
          case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED ->
              activities.merge(
                  event.getActivityTaskScheduledEventAttributes().getActivityType().getName(),
                  1L,
                  Long::sum);
          default -> {}
        }
      }
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return new Summary(events, workflowTasks, timers, activities);
  }

  /**
   * Calls Temporal with a 60 s deadline, up to 3 times: on a loaded machine a call can time out,
   * and one lost reading must not end a run of hours.
   */
  <T> T call(Function<WorkflowServiceGrpc.WorkflowServiceBlockingStub, T> rpc) {
    for (int attempt = 1; ; attempt++) {
      try {
        return rpc.apply(stubs.blockingStub().withDeadlineAfter(60, TimeUnit.SECONDS));
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        boolean retryable =
            code == Status.Code.DEADLINE_EXCEEDED
                || code == Status.Code.UNAVAILABLE
                || code == Status.Code.RESOURCE_EXHAUSTED;
        if (!retryable || attempt >= 3) {
          throw e;
        }
        BenchMain.sleep(2000L * attempt);
      }
    }
  }

  /** A string literal of Temporal's visibility query language. */
  static String literal(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
