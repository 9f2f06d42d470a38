package dev.dripline.worker;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

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
 */
@ConfigurationProperties("dripline.worker")
public record WorkerConfig(
    @Bindable(defaultValue = "true") boolean enabled,
    @Bindable(defaultValue = "32") int maxConcurrentActivities,
    @Bindable(defaultValue = "16") int maxConcurrentWorkflowTasks,
    @Bindable(defaultValue = "32") int maxConcurrentLocalActivities,
    @Bindable(defaultValue = "30s") Duration shutdownGrace) {}
