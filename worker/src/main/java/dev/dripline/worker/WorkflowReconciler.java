package dev.dripline.worker;

import dev.dripline.config.TemporalConfig;
import dev.dripline.db.Database;
import dev.dripline.run.BackfillRunWorkflow;
import dev.dripline.run.RunSearchAttributes;
import dev.dripline.run.RunWorkflowIds;
import dev.dripline.run.RunWorkflowInput;
import dev.dripline.target.TargetRef;
import dev.dripline.target.TargetWorkflow;
import dev.dripline.target.TargetWorkflowIds;
import io.micronaut.context.annotation.Requires;
import io.micronaut.scheduling.annotation.Scheduled;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure every active run and every target has a workflow driving it (PRODUCT R12).
 *
 * <p>PostgreSQL is the source of truth; a workflow can nevertheless be missing — the app died
 * between recording a run and starting its workflow, a signal-with-start after a retry failed while
 * Temporal was down, or an execution was terminated by hand. Every interval this job starts the
 * workflow of each such record with {@code USE_EXISTING}: a running workflow is left alone, a
 * missing one starts afresh and picks the run up from its record (recovering any slots the lost
 * execution held). Records younger than a minute are skipped so that the app's own start is never
 * raced. Any number of workers may run it: the starts are idempotent.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
@Requires(property = "dripline.worker.reconcile", value = "true", defaultValue = "true")
public class WorkflowReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(WorkflowReconciler.class);

  private final Database database;
  private final WorkflowClient client;
  private final TemporalConfig temporal;

  public WorkflowReconciler(Database database, WorkflowClient client, TemporalConfig temporal) {
    this.database = database;
    this.client = client;
    this.temporal = temporal;
  }

  private record ActiveRun(long id, String backfill, String status, String target) {}

  /** One pass over every active run and every target. */
  @Scheduled(
      fixedDelay = "${dripline.worker.reconcile-interval:60s}",
      initialDelay = "${dripline.worker.reconcile-interval:60s}")
  public void reconcile() {
    try {
      activeRuns().forEach(this::ensureRun);
      targets().forEach(this::ensureTarget);
    } catch (RuntimeException e) {
      LOG.warn("reconciling workflows failed; the next pass tries again: {}", e.getMessage());
    }
  }

  private List<ActiveRun> activeRuns() {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select id, backfill, status, target_name from runs"
                      + " where status in ('pending', 'running', 'paused')"
                      + " and created_at < now() - interval '1 minute' order by id")) {
            List<ActiveRun> runs = new ArrayList<>();
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                runs.add(
                    new ActiveRun(
                        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)));
              }
            }
            return runs;
          }
        });
  }

  private List<String> targets() {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select name from targets where created_at < now() - interval '1 minute'"
                      + " order by name")) {
            List<String> names = new ArrayList<>();
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                names.add(rs.getString(1));
              }
            }
            return names;
          }
        });
  }

  private void ensureRun(ActiveRun run) {
    String id = RunWorkflowIds.forRun(run.id());
    SearchAttributes.Builder attributes =
        SearchAttributes.newBuilder()
            .set(RunSearchAttributes.BACKFILL, run.backfill())
            .set(RunSearchAttributes.RUN_STATUS, run.status());
    if (run.target() != null) {
      attributes.set(RunSearchAttributes.TARGET, run.target());
    }
    BackfillRunWorkflow workflow =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            options(id)
                .setTypedSearchAttributes(attributes.build())
                .setStaticSummary(run.backfill() + " · run " + run.id() + " · restarted")
                .build());
    WorkflowClient.start(workflow::run, RunWorkflowInput.fresh(run.id()));
    LOG.debug("reconciled {}", id);
  }

  private void ensureTarget(String name) {
    String id = TargetWorkflowIds.forTarget(name);
    TargetWorkflow workflow =
        client.newWorkflowStub(
            TargetWorkflow.class,
            options(id)
                .setTypedSearchAttributes(
                    SearchAttributes.newBuilder().set(RunSearchAttributes.TARGET, name).build())
                .setStaticSummary("target " + name + " · restarted")
                .build());
    WorkflowClient.start(workflow::run, new TargetRef(name));
    LOG.debug("reconciled {}", id);
  }

  private WorkflowOptions.Builder options(String id) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(temporal.taskQueue())
        .setWorkflowIdConflictPolicy(
            WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE);
  }
}
