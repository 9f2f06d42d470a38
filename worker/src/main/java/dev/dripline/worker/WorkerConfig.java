package dev.dripline.worker;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.bind.annotation.Bindable;
import io.temporal.common.WorkerDeploymentVersion;
import java.time.Duration;
import java.util.Optional;

/**
 * How this process hosts a Temporal worker ({@code dripline.worker.*}).
 *
 * @param enabled whether to poll the task queue at all, {@code DRIPLINE_WORKER_ENABLED}; off in
 *     tests that start their own worker
 * @param maxConcurrentActivities batch and planning attempts run at once by this process, {@code
 *     DRIPLINE_WORKER_MAX_CONCURRENT_ACTIVITIES}
 * @param maxConcurrentWorkflowTasks workflow tasks run at once, {@code
 *     DRIPLINE_WORKER_MAX_CONCURRENT_WORKFLOW_TASKS}
 * @param maxConcurrentLocalActivities local (run bookkeeping) activities run at once, {@code
 *     DRIPLINE_WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES}
 * @param shutdownGrace how long shutdown waits for in-flight tasks before interrupting them
 * @param deploymentName the Temporal Worker Deployment this worker belongs to, {@code
 *     DRIPLINE_DEPLOYMENT_NAME}; with {@code buildId}, the worker is versioned (docs/design.md,
 *     "Worker Versioning"); both blank: an unversioned worker
 * @param buildId the build of the workflow code this worker runs, {@code DRIPLINE_BUILD_ID}
 */
@ConfigurationProperties("dripline.worker")
public record WorkerConfig(
    @Bindable(defaultValue = "true") boolean enabled,
    @Bindable(defaultValue = "32") int maxConcurrentActivities,
    @Bindable(defaultValue = "16") int maxConcurrentWorkflowTasks,
    @Bindable(defaultValue = "32") int maxConcurrentLocalActivities,
    @Bindable(defaultValue = "30s") Duration shutdownGrace,
    @Nullable String deploymentName,
    @Nullable String buildId) {

  /**
   * The Worker Deployment Version this worker declares, if it is versioned.
   *
   * @throws IllegalStateException if only one of the deployment name and the build id is set
   */
  public Optional<WorkerDeploymentVersion> deploymentVersion() {
    boolean named = deploymentName != null && !deploymentName.isBlank();
    boolean built = buildId != null && !buildId.isBlank();
    if (named != built) {
      throw new IllegalStateException(
          "a versioned worker needs both DRIPLINE_DEPLOYMENT_NAME and DRIPLINE_BUILD_ID"
              + " (dripline.worker.deployment-name, dripline.worker.build-id); only "
              + (named ? "the deployment name" : "the build id")
              + " is set");
    }
    return named
        ? Optional.of(new WorkerDeploymentVersion(deploymentName.strip(), buildId.strip()))
        : Optional.empty();
  }
}
