package dev.dripline.workflows.retention;

import static org.assertj.core.api.Assertions.assertThat;

import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The purge workflow's loop on the time-skipping test server. */
class PurgeWorkflowTest {
  private static final String QUEUE = "dripline-test";

  /** Reports more to do {@code moreCalls} times, fails once after the first call, then is done. */
  static final class FakePurge implements PurgeActivities {
    final AtomicInteger calls = new AtomicInteger();
    final int moreCalls;
    volatile boolean failedOnce;

    FakePurge(int moreCalls) {
      this.moreCalls = moreCalls;
    }

    @Override
    public PurgeReport purge(PurgeRequest request) {
      int call = calls.incrementAndGet();
      if (call == 2 && !failedOnce) {
        failedOnce = true;
        throw ApplicationFailure.newFailure("database unreachable", "DatabaseOutage");
      }
      return new PurgeReport(10, 1, 1, 0, 0, call <= moreCalls + 1);
    }
  }

  private TestWorkflowEnvironment env;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
  }

  @AfterEach
  void tearDown() {
    env.close();
  }

  private PurgeReport run(FakePurge fake) {
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(PurgeWorkflowImpl.class);
    worker.registerActivitiesImplementations(fake);
    env.start();
    PurgeWorkflow workflow =
        env.getWorkflowClient()
            .newWorkflowStub(
                PurgeWorkflow.class, WorkflowOptions.newBuilder().setTaskQueue(QUEUE).build());
    return workflow.run();
  }

  @Test
  void callsThePurgeUntilItHasNothingMoreToDoRetryingAFailedCall() {
    FakePurge fake = new FakePurge(3);

    PurgeReport total = run(fake);

    // Four successful calls (three with more to do, then the last) and the failed one.
    assertThat(fake.calls.get()).isEqualTo(5);
    assertThat(total.more()).isFalse();
    assertThat(total.deletedRunBatches()).isEqualTo(40);
  }

  @Test
  void continuesAsNewAfterItsCallsPerExecution() {
    FakePurge fake = new FakePurge(PurgeWorkflowImpl.MAX_CALLS_PER_EXECUTION + 5);

    PurgeReport last = run(fake);

    // 106 successful calls and a failed one: 100 in the first execution, 6 in the next, whose
    // total is the answer.
    assertThat(fake.calls.get()).isEqualTo(PurgeWorkflowImpl.MAX_CALLS_PER_EXECUTION + 7);
    assertThat(last.deletedRunBatches()).isEqualTo(60);
  }
}
