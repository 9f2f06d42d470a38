package dev.dripline.workflows.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The webhook delivery workflow's retries on the time-skipping test server. */
class WebhookDeliveryWorkflowTest {
  private static final String QUEUE = "dripline-test";
  private static final long INITIAL = Duration.ofSeconds(5).toMillis();
  private static final long CAP = Duration.ofMinutes(1).toMillis();
  private static final long RETRY_FOR = Duration.ofHours(24).toMillis();

  /**
   * Fails the first {@code failFirst} attempts (all, if negative); records the test time of each.
   */
  static final class FakeDeliveries implements WebhookActivities {
    final List<Long> attempts = new ArrayList<>();
    final List<Long> givenUp = new ArrayList<>();
    volatile int failFirst;
    private final TestWorkflowEnvironment env;

    FakeDeliveries(TestWorkflowEnvironment env) {
      this.env = env;
    }

    @Override
    public synchronized void deliver(long deliveryId) {
      attempts.add(env.currentTimeMillis());
      if (failFirst < 0 || attempts.size() <= failFirst) {
        throw ApplicationFailure.newFailure("answered HTTP 500", "WebhookNotAcknowledged");
      }
    }

    @Override
    public synchronized void recordGivenUp(long deliveryId) {
      givenUp.add(deliveryId);
    }
  }

  private TestWorkflowEnvironment env;
  private FakeDeliveries deliveries;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
    deliveries = new FakeDeliveries(env);
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(WebhookDeliveryWorkflowImpl.class);
    worker.registerActivitiesImplementations(deliveries);
    env.start();
  }

  @AfterEach
  void tearDown() {
    env.close();
  }

  private void deliver(long deliveryId) {
    WebhookDeliveryWorkflow workflow =
        env.getWorkflowClient()
            .newWorkflowStub(
                WebhookDeliveryWorkflow.class,
                WorkflowOptions.newBuilder()
                    .setWorkflowId(WebhookWorkflowIds.delivery(QUEUE, 7, deliveryId))
                    .setTaskQueue(QUEUE)
                    .build());
    WorkflowClient.execute(workflow::deliver, input(deliveryId)).join();
  }

  private static WebhookDelivery input(long deliveryId) {
    return new WebhookDelivery(deliveryId, INITIAL, CAP, RETRY_FOR, 40_000);
  }

  @Test
  void aFailedAttemptIsRetriedWithADoublingWaitUpToTheCap() {
    deliveries.failFirst = 6;

    deliver(11);

    List<Long> times = deliveries.attempts;
    assertThat(times).hasSize(7);
    List<Long> waits = new ArrayList<>();
    for (int i = 1; i < times.size(); i++) {
      waits.add(times.get(i) - times.get(i - 1));
    }
    // 5 s, 10 s, 20 s, 40 s, then the 60 s cap.
    assertThat(waits.get(0)).isBetween(INITIAL, INITIAL + 2_000);
    assertThat(waits.get(1)).isBetween(2 * INITIAL, 2 * INITIAL + 2_000);
    assertThat(waits.get(4)).isBetween(CAP, CAP + 2_000);
    assertThat(waits.get(5)).isBetween(CAP, CAP + 2_000);
    assertThat(deliveries.givenUp).isEmpty();
  }

  @Test
  void aDeliveryNeverAcknowledgedIsRetriedForTheWholeWindowThenRecordedAsFailed() {
    deliveries.failFirst = -1;
    long started = env.currentTimeMillis();

    deliver(12);

    List<Long> times = deliveries.attempts;
    assertThat(times.get(times.size() - 1) - started).isBetween(RETRY_FOR - CAP, RETRY_FOR);
    assertThat(deliveries.givenUp).containsExactly(12L);
  }

  @Test
  void aDeliveryAcknowledgedAtOnceIsPostedOnce() {
    deliver(13);

    assertThat(deliveries.attempts).hasSize(1);
    assertThat(deliveries.givenUp).isEmpty();
  }
}
