package dev.dripline.worker;

import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.run.ActiveRunRef;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.RunWorkflowStart;
import dev.dripline.workflows.run.SignalOrigin;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetWorkflow;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.grpc.Status;
import io.micronaut.context.annotation.Requires;
import io.micronaut.scheduling.annotation.Scheduled;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure every active run, every target and the metrics snapshot have a workflow driving them
 * (spec R12, §5), and delivers the stops the API recorded for pending runs while Temporal could not
 * be reached (R2).
 *
 * <p>PostgreSQL is the source of truth; a workflow can nevertheless be missing — the app died
 * between recording a run and starting its workflow, or an execution was terminated by hand. This
 * is all it does for runs: it never changes a run's record (a run's workflow is the only writer of
 * its lifecycle), and a run whose stop was sent has that execution already. Every interval this job
 * starts the workflow of each such record with {@code USE_EXISTING}: a running workflow is left
 * alone, a missing one starts afresh and picks the run up from its record (recovering any slots the
 * lost execution held). Records younger than a minute are skipped so that the app's own start is
 * never raced. The metrics workflow is ensured the same way ({@link MetricsWorkflowStarter}), first
 * and whatever PostgreSQL answers: without it every PostgreSQL-derived gauge freezes at its last
 * value. Any number of workers may run it: the starts are idempotent.
 *
 * <p>Each workflow is ensured on its own: a start that fails (Temporal refuses one record) is
 * logged and tried again next pass, and the pass goes on with the others; a list that cannot be
 * read is skipped likewise. Only Temporal itself not answering ends a pass early.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
@Requires(property = "dripline.worker.reconcile", value = "true", defaultValue = "true")
public class WorkflowReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(WorkflowReconciler.class);

  private final RunRepository runs;
  private final TargetRepository targets;
  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final MetricsWorkflowStarter metrics;

  public WorkflowReconciler(
      RunRepository runs,
      TargetRepository targets,
      WorkflowClient client,
      TemporalConfig temporal,
      MetricsWorkflowStarter metrics) {
    this.runs = runs;
    this.targets = targets;
    this.client = client;
    this.temporal = temporal;
    this.metrics = metrics;
  }

  /**
   * What one pass did.
   *
   * @param ensured workflows found running or started
   * @param failed workflows whose start failed, and lists that could not be read
   * @param temporalUnreachable the pass ended early because Temporal did not answer
   */
  record Pass(int ensured, int failed, boolean temporalUnreachable) {}

  /**
   * One pass: the metrics workflow, then every active run, then every target, each on its own; what
   * fails is logged and left to the next pass.
   */
  @Scheduled(
      fixedDelay = "${dripline.worker.reconcile-interval:60s}",
      initialDelay = "${dripline.worker.reconcile-interval:60s}")
  public void reconcile() {
    Pass pass = pass();
    if (pass.failed() > 0) {
      LOG.warn(
          "reconciling: {} workflow(s) ensured, {} failed{}; the next pass tries again",
          pass.ensured(),
          pass.failed(),
          pass.temporalUnreachable() ? " (Temporal does not answer: pass ended early)" : "");
    }
  }

  /** One pass, as {@link #reconcile}; says what it did. */
  Pass pass() {
    PassCount count = new PassCount();
    if (!count.ensure(metrics.workflowId(), metrics::ensureRunning)) {
      return count.outcome();
    }
    for (ActiveRunRef run : count.read("active runs", runs::findActiveOverAMinuteAgo)) {
      if (!count.ensure(RunWorkflowIds.forRun(run.id()), () -> ensureRun(run))) {
        return count.outcome();
      }
    }
    for (ActiveRunRef run : count.read("stops of pending runs", runs::findPendingStopRequested)) {
      if (!count.ensure(RunWorkflowIds.forRun(run.id()), () -> stopPendingRun(run))) {
        return count.outcome();
      }
    }
    for (String target : count.read("targets", targets::registeredOverAMinuteAgo)) {
      if (!count.ensure(TargetWorkflowIds.forTarget(target), () -> ensureTarget(target))) {
        return count.outcome();
      }
    }
    return count.outcome();
  }

  /**
   * Counts a pass's outcomes. A start that fails is that record's problem (Temporal refused it: an
   * id or a search attribute over the server's limits, say) and the pass goes on; one that finds
   * Temporal unreachable or not answering in time ({@code UNAVAILABLE}, {@code DEADLINE_EXCEEDED})
   * ends the pass, since every other start would wait out the client's retries (15 s each) only to
   * fail the same way.
   */
  private static final class PassCount {
    private int ensured;
    private int failed;
    private boolean temporalUnreachable;

    /** Ensures one workflow; false only when the pass should end. */
    boolean ensure(String workflowId, Runnable start) {
      try {
        start.run();
        ensured++;
        return true;
      } catch (RuntimeException e) {
        failed++;
        LOG.warn("cannot ensure workflow {}: {}", abbreviate(workflowId, 100), reason(e));
        Status.Code code = Status.fromThrowable(e).getCode();
        temporalUnreachable =
            code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
        return !temporalUnreachable;
      }
    }

    /** Reads the records to reconcile; none (logged) if they cannot be read. */
    <T> List<T> read(String what, Supplier<List<T>> query) {
      try {
        return query.get();
      } catch (RuntimeException e) {
        failed++;
        LOG.warn("cannot read the {} to reconcile: {}", what, reason(e));
        return List.of();
      }
    }

    Pass outcome() {
      return new Pass(ensured, failed, temporalUnreachable);
    }
  }

  /** The innermost cause's message: Temporal's client wraps the server's answer. */
  private static String reason(Throwable failure) {
    Throwable cause = failure;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return abbreviate(cause.getClass().getSimpleName() + ": " + cause.getMessage(), 300);
  }

  private static String abbreviate(String text, int length) {
    return text.length() <= length
        ? text
        : text.substring(0, length) + "… (" + text.length() + " characters)";
  }

  private void ensureRun(ActiveRunRef run) {
    String id = RunWorkflowIds.forRun(run.id());
    BackfillRunWorkflow workflow =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            RunWorkflowStart.options(
                    run.id(),
                    temporal.taskQueue(),
                    run.backfill(),
                    RunStatus.fromWire(run.status()),
                    run.targetName())
                .setWorkflowIdConflictPolicy(
                    WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
                .setStaticSummary(run.backfill() + " · run " + run.id() + " · restarted")
                .build());
    WorkflowClient.start(workflow::run, RunWorkflowInput.fresh(run.id()));
    LOG.debug("reconciled {}", id);
  }

  /**
   * Delivers the stop the API recorded for a pending run while Temporal could not be reached (R2),
   * as the API would have sent it: with start, and as the API's (the API audited it).
   */
  private void stopPendingRun(ActiveRunRef run) {
    BackfillRunWorkflow workflow =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            RunWorkflowStart.options(
                    run.id(),
                    temporal.taskQueue(),
                    run.backfill(),
                    RunStatus.PENDING,
                    run.targetName())
                .setStaticSummary(run.backfill() + " · run " + run.id() + " · stopped")
                .build());
    BatchRequest request = client.newSignalWithStartRequest();
    request.add(workflow::run, RunWorkflowInput.fresh(run.id()));
    request.add(workflow::stop, SignalOrigin.API);
    client.signalWithStart(request);
    LOG.info("run {}: delivered the stop recorded while it was pending", run.id());
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
