package dev.dripline.worker;

import dev.dripline.activities.catalogue.CataloguePublisher;
import dev.dripline.activities.metrics.MetricsActivitiesImpl;
import dev.dripline.activities.retention.PurgeActivitiesImpl;
import dev.dripline.activities.run.BatchActivitiesImpl;
import dev.dripline.activities.run.DryRunActivitiesImpl;
import dev.dripline.activities.run.PlanningActivitiesImpl;
import dev.dripline.activities.run.RunActivitiesImpl;
import dev.dripline.activities.targets.LiveBatchActivitiesImpl;
import dev.dripline.activities.targets.TargetPlanningActivitiesImpl;
import dev.dripline.activities.targets.TargetRecordActivitiesImpl;
import dev.dripline.activities.webhooks.WebhookActivitiesImpl;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.workflows.dryrun.DryRunWorkflowImpl;
import dev.dripline.workflows.dryrun.PinnedDryRunWorkflowImpl;
import dev.dripline.workflows.metrics.MetricsWorkflowImpl;
import dev.dripline.workflows.retention.PurgeWorkflowImpl;
import dev.dripline.workflows.run.BackfillRunWorkflowImpl;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import dev.dripline.workflows.targets.TargetWorkflowImpl;
import dev.dripline.workflows.webhooks.WebhookDeliveryWorkflowImpl;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.runtime.event.annotation.EventListener;
import io.temporal.common.VersioningBehavior;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerDeploymentOptions;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerOptions;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Temporal worker of this process: registers the run, target, metrics, dry-run, webhook
 * delivery and purge workflows and their activities on the task queue, and polls from start-up to
 * shutdown. Once polling, it makes sure the deployment's one metrics workflow ({@link
 * TargetWorkflowIds#metrics}) is running, which {@link WorkflowReconciler} keeps so, and that the
 * purge schedule exists ({@link PurgeScheduleStarter}).
 *
 * <p>The catalogue is published before polling starts, so the app never accepts a run for a
 * definition no worker has announced, and this worker never takes a batch whose definition it has
 * not published.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
public class DriplineWorker {
  private static final Logger LOG = LoggerFactory.getLogger(DriplineWorker.class);

  /**
   * The workflow implementations a worker of {@code config} registers. Only a versioned worker's
   * declare a versioning behavior (the pinned dry run): the server refuses every workflow task
   * whose completion declares one from a worker without a deployment version, and the SDK sends
   * what the implementation's annotation says whether the worker is versioned or not.
   */
  static Class<?>[] workflows(WorkerConfig config) {
    return new Class<?>[] {
      BackfillRunWorkflowImpl.class,
      TargetWorkflowImpl.class,
      MetricsWorkflowImpl.class,
      config.deploymentVersion().isPresent()
          ? PinnedDryRunWorkflowImpl.class
          : DryRunWorkflowImpl.class,
      WebhookDeliveryWorkflowImpl.class,
      PurgeWorkflowImpl.class
    };
  }

  private final WorkerFactory factory;
  private final WorkerConfig config;
  private final TemporalConfig temporal;
  private final CataloguePublisher catalogue;
  private final RunActivitiesImpl runActivities;
  private final PlanningActivitiesImpl planningActivities;
  private final BatchActivitiesImpl batchActivities;
  private final TargetRecordActivitiesImpl targetRecordActivities;
  private final TargetPlanningActivitiesImpl targetPlanningActivities;
  private final LiveBatchActivitiesImpl liveBatchActivities;
  private final MetricsActivitiesImpl metricsActivities;
  private final DryRunActivitiesImpl dryRunActivities;
  private final MetricsWorkflowStarter metricsWorkflow;
  private final WebhookActivitiesImpl webhookActivities;
  private final PurgeActivitiesImpl purgeActivities;
  private final PurgeScheduleStarter purgeSchedule;

  public DriplineWorker(
      WorkerFactory factory,
      WorkerConfig config,
      TemporalConfig temporal,
      CataloguePublisher catalogue,
      RunActivitiesImpl runActivities,
      PlanningActivitiesImpl planningActivities,
      BatchActivitiesImpl batchActivities,
      TargetRecordActivitiesImpl targetRecordActivities,
      TargetPlanningActivitiesImpl targetPlanningActivities,
      LiveBatchActivitiesImpl liveBatchActivities,
      MetricsActivitiesImpl metricsActivities,
      DryRunActivitiesImpl dryRunActivities,
      MetricsWorkflowStarter metricsWorkflow,
      WebhookActivitiesImpl webhookActivities,
      PurgeActivitiesImpl purgeActivities,
      PurgeScheduleStarter purgeSchedule) {
    this.factory = factory;
    this.config = config;
    this.temporal = temporal;
    this.catalogue = catalogue;
    this.runActivities = runActivities;
    this.planningActivities = planningActivities;
    this.batchActivities = batchActivities;
    this.targetRecordActivities = targetRecordActivities;
    this.targetPlanningActivities = targetPlanningActivities;
    this.liveBatchActivities = liveBatchActivities;
    this.metricsActivities = metricsActivities;
    this.dryRunActivities = dryRunActivities;
    this.metricsWorkflow = metricsWorkflow;
    this.webhookActivities = webhookActivities;
    this.purgeActivities = purgeActivities;
    this.purgeSchedule = purgeSchedule;
  }

  @EventListener
  void onStartup(StartupEvent event) {
    start();
  }

  /** Publishes the catalogue, registers everything and starts polling; idempotent. */
  public synchronized void start() {
    if (factory.isStarted()) {
      return;
    }
    WorkerOptions options = workerOptions(config);
    catalogue.publish();
    Worker worker = factory.newWorker(temporal.taskQueue(), options);
    worker.registerWorkflowImplementationTypes(workflows(config));
    worker.registerActivitiesImplementations(
        runActivities,
        planningActivities,
        batchActivities,
        targetRecordActivities,
        targetPlanningActivities,
        liveBatchActivities,
        metricsActivities,
        dryRunActivities,
        webhookActivities,
        purgeActivities);
    factory.start();
    startMetricsWorkflow();
    LOG.info(
        "Temporal worker polling task queue {} in namespace {} ({} activities, {} workflow tasks"
            + " at once), {}",
        temporal.taskQueue(),
        temporal.namespace(),
        config.maxConcurrentActivities(),
        config.maxConcurrentWorkflowTasks(),
        config
            .deploymentVersion()
            .map(version -> "Worker Deployment Version " + version.toCanonicalString())
            .orElse("unversioned"));
  }

  /**
   * Starts the metrics workflow unless it is already running (a second worker, or a restart, finds
   * it and changes nothing), then ensures the purge schedule. Runs off the start-up thread and
   * never fails start-up: while Temporal is unreachable the gauges merely go stale ({@code
   * dripline_metrics_snapshot_age_seconds} grows), and {@link WorkflowReconciler}'s next pass tries
   * again.
   */
  private void startMetricsWorkflow() {
    Thread starter =
        new Thread(
            () -> {
              try {
                metricsWorkflow.ensureRunning();
                LOG.info("Metrics workflow {} is running", metricsWorkflow.workflowId());
              } catch (RuntimeException e) {
                LOG.warn(
                    "Cannot start metrics workflow {}: {}",
                    metricsWorkflow.workflowId(),
                    e.getMessage());
              }
              purgeSchedule.start();
            },
            "dripline-metrics-start");
    starter.setDaemon(true);
    starter.start();
  }

  /**
   * The worker's options: its slots, and, when it declares a deployment name and build id, Worker
   * Versioning with that version: its workflows auto-upgrade but for the dry run, which is pinned
   * ({@link #workflows}).
   */
  static WorkerOptions workerOptions(WorkerConfig config) {
    WorkerOptions.Builder options =
        WorkerOptions.newBuilder()
            .setMaxConcurrentActivityExecutionSize(config.maxConcurrentActivities())
            .setMaxConcurrentWorkflowTaskExecutionSize(config.maxConcurrentWorkflowTasks())
            .setMaxConcurrentLocalActivityExecutionSize(config.maxConcurrentLocalActivities());
    config
        .deploymentVersion()
        .ifPresent(
            version ->
                options.setDeploymentOptions(
                    WorkerDeploymentOptions.newBuilder()
                        .setUseVersioning(true)
                        .setVersion(version)
                        .setDefaultVersioningBehavior(VersioningBehavior.AUTO_UPGRADE)
                        .build()));
    return options.build();
  }

  /**
   * Stops polling and lets in-flight tasks finish within the grace period; what is still running
   * after it is interrupted and retried by Temporal on another worker.
   */
  @PreDestroy
  synchronized void stop() {
    if (!factory.isStarted() || factory.isTerminated()) {
      return;
    }
    factory.shutdown();
    long graceMillis = config.shutdownGrace().toMillis();
    factory.awaitTermination(graceMillis, TimeUnit.MILLISECONDS);
    if (!factory.isTerminated()) {
      LOG.warn("Temporal worker did not stop within {} ms; interrupting it", graceMillis);
      factory.shutdownNow();
      factory.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
