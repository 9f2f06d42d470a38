package dev.dripline.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.temporal.common.VersioningBehavior;
import io.temporal.common.WorkerDeploymentVersion;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerDeploymentOptions;
import io.temporal.worker.WorkerOptions;
import io.temporal.workflow.WorkflowVersioningBehavior;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The worker's Worker Deployment Version, from {@code DRIPLINE_DEPLOYMENT_NAME} and build id. */
class WorkerVersioningTest {
  private static WorkerConfig config(String deploymentName, String buildId) {
    return new WorkerConfig(true, 32, 16, 32, Duration.ofSeconds(30), deploymentName, buildId);
  }

  @Test
  void withoutADeploymentNameAndBuildIdTheWorkerIsUnversioned() {
    for (WorkerConfig unversioned : new WorkerConfig[] {config(null, null), config("", " ")}) {
      WorkerOptions options = DriplineWorker.workerOptions(unversioned);

      assertThat(unversioned.deploymentVersion()).isEmpty();
      WorkerDeploymentOptions deployment = options.getDeploymentOptions();
      assertThat(deployment == null || !deployment.isUsingVersioning()).isTrue();
    }
  }

  @Test
  void aDeploymentNameAndBuildIdMakeAVersionedWorkerThatAutoUpgradesByDefault() {
    WorkerOptions options = DriplineWorker.workerOptions(config("dripline", "0.2.0-abc123"));

    WorkerDeploymentOptions deployment = options.getDeploymentOptions();
    assertThat(deployment.isUsingVersioning()).isTrue();
    assertThat(deployment.getVersion())
        .isEqualTo(new WorkerDeploymentVersion("dripline", "0.2.0-abc123"));
    assertThat(deployment.getDefaultVersioningBehavior())
        .isEqualTo(VersioningBehavior.AUTO_UPGRADE);
  }

  @Test
  void onlyOneOfTheTwoIsAMistakeNamedAtStartUp() {
    assertThatThrownBy(() -> DriplineWorker.workerOptions(config("dripline", null)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("DRIPLINE_BUILD_ID")
        .hasMessageContaining("only the deployment name is set");
    assertThatThrownBy(() -> DriplineWorker.workerOptions(config(null, "b1")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("only the build id is set");
  }

  @Test
  void aVersionedWorkerRegistersEveryWorkflow() {
    TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance();
    try {
      Worker worker =
          env.newWorker(
              "dripline-versioned", DriplineWorker.workerOptions(config("dripline", "b1")));

      worker.registerWorkflowImplementationTypes(DriplineWorker.WORKFLOWS.toArray(new Class<?>[0]));

      assertThat(worker.getTaskQueue()).isEqualTo("dripline-versioned");
    } finally {
      env.close();
    }
  }

  /** What docs/design.md ("Worker Versioning") decides per workflow; null: the worker's default. */
  @Test
  void runsTargetsMetricsAndDeliveriesAutoUpgradeADryRunIsPinned() {
    Map<String, VersioningBehavior> declared = new TreeMap<>();
    for (Class<?> workflow : DriplineWorker.WORKFLOWS) {
      VersioningBehavior behavior = null;
      for (Method method : workflow.getDeclaredMethods()) {
        WorkflowVersioningBehavior annotation =
            method.getAnnotation(WorkflowVersioningBehavior.class);
        if (annotation != null) {
          behavior = annotation.value();
        }
      }
      declared.put(workflow.getSimpleName(), behavior);
    }

    Map<String, VersioningBehavior> decided = new TreeMap<>();
    decided.put("BackfillRunWorkflowImpl", VersioningBehavior.AUTO_UPGRADE);
    decided.put("TargetWorkflowImpl", VersioningBehavior.AUTO_UPGRADE);
    decided.put("MetricsWorkflowImpl", VersioningBehavior.AUTO_UPGRADE);
    decided.put("WebhookDeliveryWorkflowImpl", VersioningBehavior.AUTO_UPGRADE);
    decided.put("DryRunWorkflowImpl", VersioningBehavior.PINNED);
    decided.put("PurgeWorkflowImpl", null);
    assertThat(declared).isEqualTo(decided);
  }
}
