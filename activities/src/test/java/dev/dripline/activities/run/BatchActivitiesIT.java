package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.workflows.run.BatchActivities;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.DriplineFailure;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The activity as Temporal runs it: with a real execution context, heartbeats and failures. */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class BatchActivitiesIT {
  @Inject BatchActivitiesImpl batchActivities;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;

  private TestActivityEnvironment environment;
  private BatchActivities stub;
  private final AtomicInteger heartbeats = new AtomicInteger();

  @BeforeEach
  void setUp() {
    environment = TestActivityEnvironment.newInstance();
    environment.registerActivitiesImplementations(batchActivities);
    environment.setActivityHeartbeatListener(Object.class, details -> heartbeats.incrementAndGet());
    stub =
        environment.newActivityStub(
            BatchActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofMinutes(1))
                .setHeartbeatTimeout(Duration.ofMillis(600))
                .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                .build());
  }

  @AfterEach
  void tearDown() {
    keysBackfill.processSleepMillis(0);
    environment.close();
    fixtures.deleteCreated();
  }

  @Test
  void longBatchHeartbeatsWhileItRuns() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    keysBackfill.processSleepMillis(2_000);

    BatchResult result =
        stub.processBatch(new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10)));

    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    // A tick every 200 ms (a third of the 600 ms timeout) over two seconds; the SDK sends at most
    // one per 80 % of the timeout, and a loaded machine may delay some: at least two.
    assertThat(heartbeats.get()).isGreaterThanOrEqualTo(2);
  }

  @Test
  void permanentFailureReachesTemporalAsNonRetryable() {
    long runId = fixtures.run("running", "{\"items\":10,\"permanentKey\":1}", 10, null);
    fixtures.batches(runId, 1, 10, "enqueued");

    assertThatThrownBy(
            () ->
                stub.processBatch(
                    new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10))))
        .isInstanceOfSatisfying(
            ActivityFailure.class,
            failure -> {
              ApplicationFailure cause = (ApplicationFailure) failure.getCause();
              assertThat(cause.getType()).isEqualTo(DriplineFailure.BATCH_PERMANENT.name());
              assertThat(cause.isNonRetryable()).isTrue();
            });
  }

  @Test
  void tickIsAThirdOfTheHeartbeatTimeoutAtMostFiveSeconds() {
    assertThat(BatchActivitiesImpl.tickMillis(Duration.ofSeconds(30))).isEqualTo(5_000);
    assertThat(BatchActivitiesImpl.tickMillis(Duration.ofSeconds(3))).isEqualTo(1_000);
    assertThat(BatchActivitiesImpl.tickMillis(Duration.ZERO)).isEqualTo(5_000);
    assertThat(BatchActivitiesImpl.tickMillis(null)).isEqualTo(5_000);
  }

  @Test
  void anAttemptStopsItselfATenthBeforeItsTimeoutAtMostOneSecondBefore() {
    assertThat(BatchActivitiesImpl.untilDeadline(Duration.ofSeconds(3)))
        .isEqualTo(Duration.ofMillis(2_700));
    assertThat(BatchActivitiesImpl.untilDeadline(Duration.ofHours(1)))
        .isEqualTo(Duration.ofHours(1).minusSeconds(1));
    assertThat(BatchActivitiesImpl.untilDeadline(Duration.ZERO)).isGreaterThan(Duration.ofDays(1));
  }
}
