package dev.dripline.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.dryrun.DryRunActivities;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunRequest;
import dev.dripline.workflows.dryrun.DryRunStart;
import dev.dripline.workflows.dryrun.DryRunWorkflow;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.VersioningBehavior;
import io.temporal.api.workflow.v1.WorkflowExecutionVersioningInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.SetWorkerDeploymentCurrentVersionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Worker Versioning on the real dev server ({@code DRIPLINE_TEST_TEMPORAL_ADDRESS}): a worker given
 * a deployment name and build id ({@link DriplineWorker#workerOptions}) takes a workflow once its
 * version is the deployment's current one, and the server records the workflow's declared behavior
 * and version; a workflow started after the next version is made current runs on that one.
 */
class VersionedWorkerIT {
  private static final String NAMESPACE = "default";

  private final String tag = "versioned-" + UUID.randomUUID().toString().substring(0, 8);
  private final String queue = "dripline-" + tag;
  private final String deployment = "dripline-" + tag;
  private WorkflowServiceStubs service;
  private WorkflowClient client;
  private final List<WorkerFactory> factories = new ArrayList<>();

  @BeforeEach
  void setUp() {
    service =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder()
                .setTarget(
                    System.getenv()
                        .getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"))
                .build());
    client = WorkflowClient.newInstance(service);
  }

  @AfterEach
  void tearDown() {
    factories.forEach(WorkerFactory::shutdownNow);
    service.shutdownNow();
  }

  /**
   * A worker of build {@code buildId} (unversioned when null) registering every workflow as {@link
   * DriplineWorker} does, whose dry runs answer with that build id.
   */
  private void startWorker(String buildId) {
    WorkerConfig config =
        new WorkerConfig(
            true, 4, 4, 4, Duration.ofSeconds(5), buildId == null ? null : deployment, buildId);
    WorkerFactory factory = WorkerFactory.newInstance(client);
    factories.add(factory);
    Worker worker = factory.newWorker(queue, DriplineWorker.workerOptions(config));
    worker.registerWorkflowImplementationTypes(DriplineWorker.workflows(config));
    worker.registerActivitiesImplementations((DryRunActivities) request -> answer(buildId));
    factory.start();
  }

  private static DryRunAnswer answer(String buildId) {
    return DryRunAnswer.failed("answered by " + buildId);
  }

  /** Makes {@code buildId} current, once its worker's polls have made it known to the server. */
  private void makeCurrent(String buildId) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try {
        service
            .blockingStub()
            .setWorkerDeploymentCurrentVersion(
                SetWorkerDeploymentCurrentVersionRequest.newBuilder()
                    .setNamespace(NAMESPACE)
                    .setDeploymentName(deployment)
                    .setBuildId(buildId)
                    .setIdentity(tag)
                    .build());
        return;
      } catch (StatusRuntimeException notYetKnown) {
        if (System.nanoTime() - deadline > 0) {
          throw notYetKnown;
        }
        Thread.sleep(200);
      }
    }
  }

  private DryRunAnswer dryRun(String requestId, List<WorkflowExecution> started)
      throws TimeoutException {
    DryRunWorkflow workflow =
        client.newWorkflowStub(
            DryRunWorkflow.class,
            DryRunStart.options(requestId, queue, "example.sleep", Duration.ofSeconds(60)).build());
    DryRunRequest request = new DryRunRequest("example.sleep", "{}", 10, null, 60_000);
    started.add(WorkflowClient.start(workflow::plan, request));
    return WorkflowStub.fromTyped(workflow).getResult(60, TimeUnit.SECONDS, DryRunAnswer.class);
  }

  private WorkflowExecutionVersioningInfo versioningOf(WorkflowExecution execution) {
    return service
        .blockingStub()
        .describeWorkflowExecution(
            DescribeWorkflowExecutionRequest.newBuilder()
                .setNamespace(NAMESPACE)
                .setExecution(execution)
                .build())
        .getWorkflowExecutionInfo()
        .getVersioningInfo();
  }

  /**
   * Without a deployment the server refuses a workflow task whose completion declares a versioning
   * behavior, and retries it forever: no workflow may declare one on an unversioned worker.
   */
  @Test
  void anUnversionedWorkerCompletesItsWorkflows() throws Exception {
    List<WorkflowExecution> started = new ArrayList<>();
    startWorker(null);

    assertThat(dryRun(tag + "-unversioned", started).error()).isEqualTo("answered by null");
    assertThat(versioningOf(started.get(0)).getBehavior())
        .isEqualTo(VersioningBehavior.VERSIONING_BEHAVIOR_UNSPECIFIED);
  }

  @Test
  void aVersionedWorkerTakesWorkflowsOnceItsVersionIsCurrentAndTheNextVersionTakesOver()
      throws Exception {
    List<WorkflowExecution> started = new ArrayList<>();
    startWorker("b1");
    makeCurrent("b1");

    assertThat(dryRun(tag + "-1", started).error()).isEqualTo("answered by b1");
    WorkflowExecutionVersioningInfo first = versioningOf(started.get(0));
    assertThat(first.getBehavior()).isEqualTo(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    assertThat(first.getDeploymentVersion().getDeploymentName()).isEqualTo(deployment);
    assertThat(first.getDeploymentVersion().getBuildId()).isEqualTo("b1");

    startWorker("b2");
    makeCurrent("b2");

    assertThat(dryRun(tag + "-2", started).error()).isEqualTo("answered by b2");
    assertThat(versioningOf(started.get(1)).getDeploymentVersion().getBuildId()).isEqualTo("b2");
  }
}
