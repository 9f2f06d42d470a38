package dev.dripline.target;

import dev.dripline.run.BackfillRunWorkflow;
import dev.dripline.run.RunSearchAttributes;
import dev.dripline.run.RunStatus;
import dev.dripline.run.RunWorkflowIds;
import dev.dripline.run.RunWorkflowInput;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

/**
 * Stops a target's runs for good when the target no longer wants them — it is deleted or replanned
 * (spec T7, R7), or a new planning attempt finds runs its target left behind. The decision is made
 * in the run's record, in the caller's transaction, so nothing revives such a run (the worker's
 * reconciler restarts every pending, running or paused run) and no later target of the same name
 * adopts it:
 *
 * <ul>
 *   <li>a <em>pending</em> run has started nothing: it ends {@code stopped} at once (R2);
 *   <li>a <em>running</em> or <em>paused</em> run has batches in flight that must finish (R7): its
 *       stop is recorded ({@code stop_requested_at}, so chains take no further batch) and, after
 *       the commit, {@link #deliver delivered} to its workflow with signal-with-start — a run whose
 *       execution is gone gets a new one, which ends it {@code stopped}.
 * </ul>
 */
public final class TargetRunStops {
  private TargetRunStops() {}

  /** A running or paused run whose stop is recorded and must still reach its workflow. */
  public record RunToStop(long runId, String backfill) {}

  /**
   * Stops the active runs of target {@code target} — those recorded for it, and {@code
   * currentRunId} (its current run, whatever it is recorded for) — except {@code keep}.
   *
   * @return the running or paused ones, to {@link #deliver} after the transaction commits
   */
  public static List<RunToStop> stopActiveRuns(
      Connection connection, String target, Long currentRunId, Long keep) throws SQLException {
    String which = " and (target_name = ? or id = ?) and id is distinct from ?";
    // A pending run has no batches yet (planning starts once it runs), so nothing else changes.
    try (PreparedStatement stop =
        connection.prepareStatement(
            "update runs set status = 'stopped', finished_at = now(), updated_at = now()"
                + " where status = 'pending'"
                + which)) {
      bind(stop, target, currentRunId, keep);
      stop.executeUpdate();
    }
    List<RunToStop> stopping = new ArrayList<>();
    try (PreparedStatement request =
        connection.prepareStatement(
            "update runs set stop_requested_at = coalesce(stop_requested_at, now()),"
                + " updated_at = now() where status in ('running', 'paused')"
                + which
                + " returning id, backfill")) {
      bind(request, target, currentRunId, keep);
      try (ResultSet rs = request.executeQuery()) {
        while (rs.next()) {
          stopping.add(new RunToStop(rs.getLong(1), rs.getString(2)));
        }
      }
    }
    return stopping;
  }

  private static void bind(PreparedStatement statement, String target, Long current, Long keep)
      throws SQLException {
    statement.setString(1, target);
    setLong(statement, 2, current);
    setLong(statement, 3, keep);
  }

  private static void setLong(PreparedStatement statement, int index, Long value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.BIGINT);
    } else {
      statement.setLong(index, value);
    }
  }

  /**
   * Signals {@code stop} to the run's workflow, starting a new execution of it first if none is
   * running: a stop must also reach a run whose execution was lost.
   *
   * @throws RuntimeException if Temporal cannot be reached; the stop stays recorded
   */
  public static void deliver(
      WorkflowClient client, String taskQueue, String target, RunToStop run) {
    signalWithStart(client, taskQueue, target, run, "stopped", BackfillRunWorkflow::stop);
  }

  /**
   * Signals {@code retry} to the workflow of a failed run that a target re-queued in its record
   * (spec T5): the run's workflow, which stays open for a retry after the run ended, goes on at
   * once — as it does for the API's retry — and a new execution is started if none is running.
   *
   * @throws RuntimeException if Temporal cannot be reached; the waiting workflow still finds the
   *     run re-opened in its record at its next look
   */
  public static void deliverRetry(
      WorkflowClient client, String taskQueue, String target, RunToStop run) {
    signalWithStart(client, taskQueue, target, run, "retried", BackfillRunWorkflow::retry);
  }

  private static void signalWithStart(
      WorkflowClient client,
      String taskQueue,
      String target,
      RunToStop run,
      String why,
      java.util.function.Consumer<BackfillRunWorkflow> signal) {
    BackfillRunWorkflow stub =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(RunWorkflowIds.forRun(run.runId()))
                .setTaskQueue(taskQueue)
                .setWorkflowIdReusePolicy(
                    WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
                .setTypedSearchAttributes(
                    SearchAttributes.newBuilder()
                        .set(RunSearchAttributes.BACKFILL, run.backfill())
                        .set(RunSearchAttributes.RUN_STATUS, RunStatus.RUNNING.wire())
                        .set(RunSearchAttributes.TARGET, target)
                        .build())
                .setStaticSummary(
                    run.backfill()
                        + " · run "
                        + run.runId()
                        + " · "
                        + why
                        + " for target "
                        + target)
                .build());
    BatchRequest batch = client.newSignalWithStartRequest();
    batch.add(stub::run, RunWorkflowInput.fresh(run.runId()));
    batch.add(() -> signal.accept(stub));
    client.signalWithStart(batch);
  }
}
