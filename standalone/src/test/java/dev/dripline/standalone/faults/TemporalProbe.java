package dev.dripline.standalone.faults;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** What the test Temporal server knows about run workflows, read with the SDK's client. */
final class TemporalProbe implements AutoCloseable {
  private final WorkflowServiceStubs stubs;
  private final WorkflowClient client;

  TemporalProbe() {
    stubs =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget(ChildJvm.temporalAddress()).build());
    client =
        WorkflowClient.newInstance(
            stubs, WorkflowClientOptions.newBuilder().setNamespace("default").build());
  }

  WorkflowClient client() {
    return client;
  }

  /** The latest execution of {@code workflowId}, if it ever existed. */
  Optional<DescribeWorkflowExecutionResponse> describe(String workflowId) {
    try {
      return Optional.of(
          stubs
              .blockingStub()
              .describeWorkflowExecution(
                  DescribeWorkflowExecutionRequest.newBuilder()
                      .setNamespace("default")
                      .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
                      .build()));
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** Ids of every workflow execution (open or closed) of the task queue, from visibility. */
  Set<String> workflowIdsOnQueue(String taskQueue) {
    return client
        .listExecutions("TaskQueue = '" + taskQueue + "'")
        .map(execution -> execution.getExecution().getWorkflowId())
        .collect(Collectors.toSet());
  }

  @Override
  public void close() {
    stubs.shutdownNow();
  }
}
