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
      WorkerConfig versioned = config("dripline", "b1");
      Worker worker = env.newWorker("dripline-versioned", DriplineWorker.workerOptions(versioned));

      worker.registerWorkflowImplementationTypes(DriplineWorker.workflows(versioned));

      assertThat(worker.getTaskQueue()).isEqualTo("dripline-versioned");
    } finally {
      env.close();
    }
  }

  /** The behavior each registered implementation declares; null: the worker's default. */
  private static Map<String, VersioningBehavior> declared(WorkerConfig config) {
    Map<String, VersioningBehavior> declared = new TreeMap<>();
    for (Class<?> workflow : DriplineWorker.workflows(config)) {
      VersioningBehavior behavior = null;
      for (Method method : workflow.getMethods()) {
        WorkflowVersioningBehavior annotation =
            method.getAnnotation(WorkflowVersioningBehavior.class);
        if (annotation != null) {
          behavior = annotation.value();
        }
      }
      declared.put(workflow.getSimpleName(), behavior);
    }
    return declared;
  }

  /**
   * What docs/design.md ("Worker Versioning") decides: a versioned worker's dry run is pinned and
   * the rest take its default, auto-upgrade.
   */
  @Test
  void aVersionedWorkerPinsOnlyTheDryRun() {
    Map<String, VersioningBehavior> decided = new TreeMap<>();
    decided.put("BackfillRunWorkflowImpl", null);
    decided.put("TargetWorkflowImpl", null);
    decided.put("MetricsWorkflowImpl", null);
    decided.put("WebhookDeliveryWorkflowImpl", null);
    decided.put("PinnedDryRunWorkflowImpl", VersioningBehavior.PINNED);
    decided.put("PurgeWorkflowImpl", null);

    assertThat(declared(config("dripline", "b1"))).isEqualTo(decided);
  }

  /** The server refuses a workflow task declaring a behavior from an unversioned worker. */
  @Test
  void anUnversionedWorkersWorkflowsDeclareNoBehavior() {
    assertThat(declared(config(null, null)))
        .hasSize(6)
        .allSatisfy((workflow, behavior) -> assertThat(behavior).as(workflow).isNull());
  }
}
