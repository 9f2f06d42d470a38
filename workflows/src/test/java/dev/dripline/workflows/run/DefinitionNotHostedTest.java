package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A run whose batch and planning tasks reach a worker that does not host its definition, as in a
 * rolling deploy that adds it: the activities' retryable {@link
 * DriplineFailure#DEFINITION_NOT_HOSTED} is retried by the run's activity options until a worker
 * that hosts it takes the task, and their {@link DriplineFailure#UNKNOWN_BACKFILL} after the wait
 * fails the run, naming the definition.
 */
class DefinitionNotHostedTest {
  private static final String QUEUE = "dripline-test";

  private TestWorkflowEnvironment env;
  private WorkflowClient client;
  private WorkerFactory newVersion;
  private final FakeRunStore store = new FakeRunStore();

  /** Batch and planning attempts that reached the worker without the definition. */
  private final AtomicInteger notHosted = new AtomicInteger();

  /** Such attempts after which the worker without the definition reports the wait over. */
  private volatile int waitOverAfter = Integer.MAX_VALUE;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
    for (String name : List.of("DriplineBackfill", "DriplineRunStatus", "DriplineTarget")) {
      env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    Worker previous = env.newWorker(QUEUE);
    previous.registerWorkflowImplementationTypes(BackfillRunWorkflowImpl.class);
    previous.registerActivitiesImplementations(withoutTheDefinition());
    env.start();
    client = env.getWorkflowClient();
  }

  @AfterEach
  void tearDown() {
    if (newVersion != null) {
      newVersion.shutdownNow();
    }
    env.close();
  }

  /**
   * The store's activities as a worker without the run's definition answers them: batch and
   * planning attempts fail as {@code BatchActivitiesImpl} and {@code PlanningActivitiesImpl} then
   * fail them; the rest is the store's.
   */
  private Object withoutTheDefinition() {
    return Proxy.newProxyInstance(
        getClass().getClassLoader(),
        new Class<?>[] {RunActivities.class, PlanningActivities.class, BatchActivities.class},
        (proxy, method, args) -> {
          if (isBatchOrPlanning(method)) {
            if (notHosted.incrementAndGet() > waitOverAfter) {
              throw ApplicationFailure.newNonRetryableFailure(
                  "no backfill definition named "
                      + store.backfill
                      + " is registered in the workers that took this task, and no worker that"
                      + " hosts it took it within 10m (dripline.engine.unknown-backfill-wait)",
                  DriplineFailure.UNKNOWN_BACKFILL.name());
            }
            throw ApplicationFailure.newFailureWithCauseAndDelay(
                "no backfill definition named " + store.backfill + " is registered in this worker",
                DriplineFailure.DEFINITION_NOT_HOSTED.name(),
                null,
                Duration.ofSeconds(1));
          }
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private static boolean isBatchOrPlanning(Method method) {
    return method.getName().equals("processBatch") || method.getName().equals("planNextPage");
  }

  private WorkflowStub start() {
    BackfillRunWorkflow run =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(RunWorkflowIds.forRun(store.runId))
                .setTaskQueue(QUEUE)
                .build());
    WorkflowClient.start(run::run, RunWorkflowInput.fresh(store.runId));
    return client.newUntypedWorkflowStub(RunWorkflowIds.forRun(store.runId));
  }

  @Test
  void aRunWhoseFirstWorkerLacksItsDefinitionCompletesOnceAWorkerWithItAppears() throws Exception {
    store.items = 12;
    store.requestedCap = 3;
    WorkflowStub run = start();
    await().atMost(Duration.ofSeconds(60)).until(() -> notHosted.get() >= 2);

    // A worker of the next version, which hosts the definition, joins the task queue; the one
    // without it keeps polling.
    newVersion = WorkerFactory.newInstance(client);
    newVersion.newWorker(QUEUE).registerActivitiesImplementations(store);
    newVersion.start();
    RunOutcome outcome = run.getResult(120, TimeUnit.SECONDS, RunOutcome.class);

    assertThat(outcome).isEqualTo(new RunOutcome(RunStatus.COMPLETED, 12));
    assertThat(store.count(BatchStatus.COMPLETED)).isEqualTo(12);
    assertThat(IntStream.rangeClosed(1, 12).map(store::executions)).containsOnly(1);
    assertThat(store.maxExecuting()).isBetween(1, 3);
    assertThat(store.error).isNull();
  }

  @Test
  void aRunWhoseTasksFindNoWorkerWithItsDefinitionWithinTheWaitFailsNamingIt() throws Exception {
    store.items = 12;
    store.requestedCap = 3;
    waitOverAfter = 3;
    WorkflowStub run = start();

    await().atMost(Duration.ofSeconds(60)).until(() -> store.status().isTerminal());

    assertThat(store.status()).isEqualTo(RunStatus.FAILED);
    assertThat(store.error)
        .contains("no backfill definition named test.keys")
        .contains("unknown-backfill-wait");
    assertThat(store.count(BatchStatus.COMPLETED)).isZero();
    assertThat(notHosted.get()).isEqualTo(4);
    run.terminate("test done");
  }
}
