package dev.dripline.workflows.dryrun;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.RunSearchAttributes;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The dry-run workflow on the time-skipping test server. */
class DryRunWorkflowTest {
  private static final String QUEUE = "dripline-test";
  private static final DryRunRequest REQUEST =
      new DryRunRequest("example.sleep", "{\"items\":3}", 2, null, 1_000_000);

  /** Keys as JSON carries them: text, and numbers that read back as the smallest type. */
  private static final DryRunAnswer ANSWER =
      new DryRunAnswer(
          null,
          3,
          true,
          2,
          "a",
          List.of("c", 3),
          List.of(
              new DryRunAnswer.SampleBatch("a", "b", 2),
              new DryRunAnswer.SampleBatch("c", List.of("c", 3), 1)));

  /** Answers after {@code notHostedFirst} attempts that land on a worker without the definition. */
  static final class FakeDryRuns implements DryRunActivities {
    final AtomicInteger attempts = new AtomicInteger();
    volatile int notHostedFirst;

    @Override
    public DryRunAnswer plan(DryRunRequest request) {
      if (attempts.incrementAndGet() <= notHostedFirst) {
        throw ApplicationFailure.newFailure("not here", DriplineFailure.UNKNOWN_BACKFILL.name());
      }
      return request.equals(REQUEST) ? ANSWER : DryRunAnswer.failed("unexpected " + request);
    }
  }

  private TestWorkflowEnvironment env;
  private WorkflowClient client;
  private FakeDryRuns dryRuns;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
    env.registerSearchAttribute(
        RunSearchAttributes.BACKFILL.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    dryRuns = new FakeDryRuns();
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(DryRunWorkflowImpl.class);
    worker.registerActivitiesImplementations(dryRuns);
    env.start();
    client = env.getWorkflowClient();
  }

  @AfterEach
  void tearDown() {
    env.close();
  }

  private DryRunWorkflow workflow(String requestId) {
    return client.newWorkflowStub(
        DryRunWorkflow.class,
        DryRunStart.options(requestId, QUEUE, REQUEST.backfill(), Duration.ofSeconds(30)).build());
  }

  @Test
  void theWorkersAnswerIsTheWorkflowsResult() {
    DryRunAnswer answer = workflow("a").plan(REQUEST);

    assertThat(answer).isEqualTo(ANSWER);
    assertThat(dryRuns.attempts).hasValue(1);
  }

  @Test
  void attemptsOnWorkersWithoutTheDefinitionAreRetriedUntilOneAnswers() {
    dryRuns.notHostedFirst = 3;

    DryRunAnswer answer = workflow("b").plan(REQUEST);

    assertThat(answer).isEqualTo(ANSWER);
    assertThat(dryRuns.attempts).hasValue(4);
  }

  @Test
  void aDryRunNoWorkerAnswersEndsAtItsTimeout() {
    dryRuns.notHostedFirst = Integer.MAX_VALUE;

    assertThatThrownBy(() -> workflow("c").plan(REQUEST))
        .isInstanceOfSatisfying(
            WorkflowFailedException.class,
            failure -> assertThat(DryRunStart.timedOut(failure)).as("%s", failure).isTrue());
    assertThat(dryRuns.attempts.get()).isGreaterThan(3);
  }

  @Test
  void aDryRunIsStartedUnderItsRequestsIdFoundByItsDefinitionAndBoundedByTheWait() {
    WorkflowOptions options =
        DryRunStart.options("abc", QUEUE, "example.sleep", Duration.ofSeconds(30)).build();

    assertThat(options.getWorkflowId()).isEqualTo("dripline-dry-run-abc");
    assertThat(options.getTypedSearchAttributes().get(RunSearchAttributes.BACKFILL))
        .isEqualTo("example.sleep");
    assertThat(options.getWorkflowExecutionTimeout()).isEqualTo(Duration.ofSeconds(30));
  }
}
