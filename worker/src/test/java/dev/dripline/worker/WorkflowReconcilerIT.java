package dev.dripline.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.runtime.config.TargetConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.workflows.metrics.MetricsInput;
import dev.dripline.workflows.metrics.MetricsWorkflow;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.SignalOrigin;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.micronaut.context.ApplicationContext;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionMetadata;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.converter.GlobalDataConverter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reconciler against real PostgreSQL and the real Temporal dev server ({@code
 * DRIPLINE_TEST_TEMPORAL_ADDRESS}; the dev server, unlike the in-memory one, enforces Temporal's
 * limits, which give a start that fails for one record alone).
 *
 * <p>No worker polls the test's task queue: what a pass starts stays as it was started, and is
 * terminated afterwards, so the records of other test classes that a pass adopts (the database is
 * shared) are not driven by this test.
 */
class WorkflowReconcilerIT {
  private final String tag = "reconciler-" + UUID.randomUUID().toString().substring(0, 8);
  private final String queue = "dripline-" + tag;
  private ApplicationContext context;
  private Database database;
  private WorkflowClient client;
  private WorkflowReconciler reconciler;
  private final List<Long> runs = new ArrayList<>();
  private final List<String> targets = new ArrayList<>();

  @BeforeEach
  void setUp() {
    context =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.address",
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                "dripline.temporal.task-queue",
                queue),
            "test");
    database = context.getBean(Database.class);
    client = context.getBean(WorkflowClient.class);
    TemporalConfig temporal = context.getBean(TemporalConfig.class);
    reconciler =
        new WorkflowReconciler(
            context.getBean(RunRepository.class),
            context.getBean(TargetRepository.class),
            client,
            temporal,
            new MetricsWorkflowStarter(client, temporal, context.getBean(TargetConfig.class)));
  }

  @AfterEach
  void tearDown() {
    try {
      List<String> started = new ArrayList<>();
      started.add(TargetWorkflowIds.metrics(queue));
      runs.forEach(run -> started.add(RunWorkflowIds.forRun(run)));
      targets.forEach(target -> started.add(TargetWorkflowIds.forTarget(target)));
      // And whatever a pass adopted of other classes' records (visibility may lag a little).
      client
          .listExecutions("TaskQueue = '" + queue + "' AND ExecutionStatus = 'Running'")
          .map(WorkflowExecutionMetadata::getExecution)
          .forEach(execution -> started.add(execution.getWorkflowId()));
      for (String id : started) {
        try {
          client.newUntypedWorkflowStub(id).terminate("WorkflowReconcilerIT done");
        } catch (RuntimeException e) {
          // Not started (the broken records), or already ended.
        }
      }
      for (long run : runs) {
        database.runInTransaction(
            connection -> {
              try (PreparedStatement delete =
                  connection.prepareStatement("delete from runs where id = ?")) {
                delete.setLong(1, run);
                delete.executeUpdate();
              }
            });
      }
      for (String target : targets) {
        database.runInTransaction(
            connection -> {
              try (PreparedStatement delete =
                  connection.prepareStatement("delete from targets where name = ?")) {
                delete.setString(1, target);
                delete.executeUpdate();
              }
            });
      }
    } finally {
      context.close();
    }
  }

  @Test
  void aMetricsWorkflowThatEndedIsStartedAgainByTheNextPass() {
    String id = TargetWorkflowIds.metrics(queue);
    MetricsWorkflow metrics =
        client.newWorkflowStub(
            MetricsWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(queue).build());
    WorkflowExecution first = WorkflowClient.start(metrics::run, new MetricsInput(10_000));
    client.newUntypedWorkflowStub(id).terminate("the gauges' workflow died");

    passReachingTemporal();

    var described = client.newUntypedWorkflowStub(id).describe();
    assertThat(described.getStatus())
        .as("the metrics workflow after a reconciler pass")
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(described.getExecution().getRunId()).isNotEqualTo(first.getRunId());
  }

  @Test
  void aMissingMetricsWorkflowIsStartedAndARunningOneIsLeftAlone() {
    passReachingTemporal();
    String running = status(TargetWorkflowIds.metrics(queue));
    String runId =
        client
            .newUntypedWorkflowStub(TargetWorkflowIds.metrics(queue))
            .describe()
            .getExecution()
            .getRunId();

    passReachingTemporal();

    assertThat(running).isEqualTo("WORKFLOW_EXECUTION_STATUS_RUNNING");
    assertThat(
            client
                .newUntypedWorkflowStub(TargetWorkflowIds.metrics(queue))
                .describe()
                .getExecution()
                .getRunId())
        .isEqualTo(runId);
  }

  @Test
  void aRecordWhoseStartFailsDoesNotKeepTheOthersFromTheirWorkflows() {
    // Records a pass visits in order (runs by id, then targets by name): each broken one comes
    // first. The server refuses their starts: a search attribute value over 2 KB, a workflow id
    // over 1,000 characters.
    long brokenRun = run("x".repeat(3000));
    long run = run("example.sleep");
    String brokenTarget = target("a" + tag + "-" + "n".repeat(1000));
    String target = target("b" + tag);

    WorkflowReconciler.Pass pass = passReachingTemporal();

    assertThat(pass.failed()).as("failed starts in %s", pass).isGreaterThanOrEqualTo(2);
    assertThat(pass.temporalUnreachable()).isFalse();
    assertThat(status(RunWorkflowIds.forRun(run)))
        .as("the run after a broken one")
        .isEqualTo("WORKFLOW_EXECUTION_STATUS_RUNNING");
    assertThat(status(TargetWorkflowIds.forTarget(target)))
        .as("the target after a broken one")
        .isEqualTo("WORKFLOW_EXECUTION_STATUS_RUNNING");
    assertThat(status(TargetWorkflowIds.metrics(queue)))
        .as("the metrics workflow")
        .isEqualTo("WORKFLOW_EXECUTION_STATUS_RUNNING");
    assertThat(status(RunWorkflowIds.forRun(brokenRun))).isEqualTo("none");
    assertThat(brokenTarget).hasSizeGreaterThan(1000);
  }

  /**
   * A stop the API recorded for a pending run while Temporal could not be reached (R2) reaches the
   * run's workflow with the next pass, however young the record: the signal the API would have
   * sent, with start, as the API's (it audited the stop itself).
   */
  @Test
  void aStopRecordedForAPendingRunIsDeliveredByTheNextPass() {
    long stopped = run("example.sleep");
    long other = run("example.order-lines");
    database.runInTransaction(
        connection -> {
          try (PreparedStatement update =
              connection.prepareStatement(
                  "update runs set stop_requested_at = now(), created_at = now() where id = ?")) {
            update.setLong(1, stopped);
            update.executeUpdate();
          }
        });

    passReachingTemporal();

    assertThat(stopSignals(RunWorkflowIds.forRun(stopped)))
        .as("stop signals in the stopped run's history")
        .containsExactly(SignalOrigin.API);
    assertThat(stopSignals(RunWorkflowIds.forRun(other)))
        .as("stop signals in the other run's history")
        .isEmpty();
  }

  @Test
  void aPassThatFindsTemporalUnreachableEndsAtItsFirstStart() throws Exception {
    run("example.sleep");
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    try (ApplicationContext unreachable =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.address",
                "127.0.0.1:" + closedPort,
                "dripline.temporal.task-queue",
                queue,
                "dripline.temporal.rpc-retry-expiration",
                "1s"),
            "test")) {
      WorkflowClient nowhere = unreachable.getBean(WorkflowClient.class);
      TemporalConfig temporal = unreachable.getBean(TemporalConfig.class);
      WorkflowReconciler cutOff =
          new WorkflowReconciler(
              context.getBean(RunRepository.class),
              context.getBean(TargetRepository.class),
              nowhere,
              temporal,
              new MetricsWorkflowStarter(
                  nowhere, temporal, unreachable.getBean(TargetConfig.class)));

      WorkflowReconciler.Pass pass = cutOff.pass();

      // Every other start would have waited out the client's retries to fail the same way.
      assertThat(pass).isEqualTo(new WorkflowReconciler.Pass(0, 1, true));
    }
  }

  /** The workflow's status, or "none" when there is no such workflow. */
  /**
   * A reconciler pass that Temporal answered throughout. On a loaded machine a start can miss its
   * RPC deadline, which ends the pass early by design (the next pass tries again); the tests here
   * are about what a pass does once Temporal answers, so they take the next pass, as the worker
   * would.
   */
  private WorkflowReconciler.Pass passReachingTemporal() {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    WorkflowReconciler.Pass pass = reconciler.pass();
    while (pass.temporalUnreachable()) {
      assertThat(System.nanoTime()).as("Temporal answered a pass: %s", pass).isLessThan(deadline);
      pass = reconciler.pass();
    }
    return pass;
  }

  /** The inputs of the {@code stop} signals in the workflow's history; none if no such workflow. */
  private List<SignalOrigin> stopSignals(String workflowId) {
    if (status(workflowId).equals("none")) {
      return List.of();
    }
    return client.fetchHistory(workflowId).getEvents().stream()
        .filter(HistoryEvent::hasWorkflowExecutionSignaledEventAttributes)
        .map(HistoryEvent::getWorkflowExecutionSignaledEventAttributes)
        .filter(signal -> signal.getSignalName().equals("stop"))
        .map(
            signal ->
                GlobalDataConverter.get()
                    .fromPayload(
                        signal.getInput().getPayloads(0), SignalOrigin.class, SignalOrigin.class))
        .toList();
  }

  private String status(String workflowId) {
    try {
      return client.newUntypedWorkflowStub(workflowId).describe().getStatus().name();
    } catch (WorkflowNotFoundException e) {
      return "none";
    }
  }

  /** A pending run recorded two minutes ago whose workflow was never started. */
  private long run(String backfill) {
    long id =
        database.withConnection(
            connection -> {
              try (PreparedStatement insert =
                  connection.prepareStatement(
                      "insert into runs (backfill, options, options_key, batch_size,"
                          + " max_parallel_batches, status, created_by, created_at)"
                          + " values (?, ?::jsonb, ?, 5, 1, 'pending', 'test',"
                          + " now() - interval '2 minutes') returning id")) {
                String options = "{\"items\":1,\"faultTag\":\"" + tag + "\"}";
                insert.setString(1, backfill);
                insert.setString(2, options);
                insert.setString(3, options);
                try (ResultSet rs = insert.executeQuery()) {
                  rs.next();
                  return rs.getLong(1);
                }
              }
            });
    runs.add(id);
    return id;
  }

  /** A target recorded two minutes ago whose workflow was never started. */
  private String target(String name) {
    database.runInTransaction(
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into targets (name, backfill, options, state, created_at)"
                      + " values (?, 'example.copy-events', '{\"tenant\":\"t\"}'::jsonb,"
                      + " 'pending_backfill', now() - interval '2 minutes')")) {
            insert.setString(1, name);
            insert.executeUpdate();
          }
        });
    targets.add(name);
    return name;
  }
}
