package dev.dripline.worker;

import dev.dripline.runtime.config.RetentionConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.retention.PurgeSchedule;
import io.temporal.api.workflowservice.v1.DescribeNamespaceRequest;
import io.temporal.client.WorkflowClient;
import jakarta.inject.Singleton;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a worker does about retention at start-up (spec D5, docs/operations.md "Retention and
 * deletion"): creates or updates the purge schedule ({@link PurgeSchedule#ensure}) unless {@code
 * DRIPLINE_PURGE_SCHEDULE=false}, and warns when the namespace keeps closed workflow executions for
 * less than {@code DRIPLINE_RETENTION}: their histories would be gone while Dripline still keeps
 * the runs' batches. Neither ever fails the start-up.
 */
@Singleton
public class PurgeScheduleStarter {
  private static final Logger LOG = LoggerFactory.getLogger(PurgeScheduleStarter.class);

  private final PurgeSchedule schedule;
  private final RetentionConfig retention;
  private final TemporalConfig temporal;
  private final WorkflowClient client;

  public PurgeScheduleStarter(
      PurgeSchedule schedule,
      RetentionConfig retention,
      TemporalConfig temporal,
      WorkflowClient client) {
    this.schedule = schedule;
    this.retention = retention;
    this.temporal = temporal;
    this.client = client;
  }

  /**
   * Creates the purge schedule, or brings it to this configuration ({@link PurgeSchedule#ensure});
   * throws what Temporal answered if it could not.
   *
   * @return true if this call created or changed it
   */
  public boolean ensureSchedule() {
    return schedule.ensure();
  }

  /** Ensures the schedule and checks the namespace's retention, logging what fails. */
  public void start() {
    if (retention.schedule()) {
      try {
        ensureSchedule();
      } catch (RuntimeException e) {
        LOG.warn("Cannot create or update purge schedule {}: {}", schedule.id(), e.toString());
      }
    }
    try {
      Duration kept = namespaceRetention();
      if (kept.compareTo(retention.period()) < 0) {
        LOG.warn(
            "Temporal namespace {} keeps closed workflows for {}, less than DRIPLINE_RETENTION {}:"
                + " set its retention to at least that (docs/operations.md, \"Retention and"
                + " deletion\")",
            temporal.namespace(),
            kept,
            retention.period());
      }
    } catch (RuntimeException e) {
      LOG.warn("Cannot read the retention of namespace {}: {}", temporal.namespace(), e.toString());
    }
  }

  /** The namespace's workflow-execution retention, as Temporal reports it. */
  Duration namespaceRetention() {
    var ttl =
        client
            .getWorkflowServiceStubs()
            .blockingStub()
            .describeNamespace(
                DescribeNamespaceRequest.newBuilder().setNamespace(temporal.namespace()).build())
            .getConfig()
            .getWorkflowExecutionRetentionTtl();
    return Duration.ofSeconds(ttl.getSeconds(), ttl.getNanos());
  }
}
