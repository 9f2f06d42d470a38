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
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
  void aBatchOnAWorkerWithoutItsDefinitionWaitsForOneThatHostsItSpendingNoAttempt() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    List<Long> waitingSince = new CopyOnWriteArrayList<>();
    environment.setActivityHeartbeatListener(Long.class, waitingSince::add);
    BatchWork elsewhere = new BatchWork(runId, "test.elsewhere", new BatchRef(1, 1, 10, 10));

    ApplicationFailure first = batchFailureOf(() -> stub.processBatch(elsewhere));

    assertThat(first.getType()).isEqualTo(DriplineFailure.DEFINITION_NOT_HOSTED.name());
    assertThat(first.isNonRetryable()).isFalse();
    assertThat(first.getNextRetryDelay()).isEqualTo(Duration.ofSeconds(1));
    assertThat(waitingSince).as("when the wait began, for the next attempt").hasSize(1);
    assertThat(fixtures.batchRows(runId))
        .singleElement()
        .satisfies(
            row -> {
              assertThat(row).containsEntry("status", "enqueued").containsEntry("attempts", 0);
              assertThat(row.get("holder")).isNull();
            });

    // The next attempt reaches another worker without it: the wait goes on from when it began.
    environment.setHeartbeatDetails(waitingSince.get(0));
    ApplicationFailure second = batchFailureOf(() -> stub.processBatch(elsewhere));

    assertThat(second.isNonRetryable()).isFalse();
    assertThat(waitingSince).hasSize(2).containsOnly(waitingSince.get(0));
  }

  @Test
  void aBatchThatWaitedTheWholeWaitFailsNamingItsDefinitionAndTheWait() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    environment.setHeartbeatDetails(
        Instant.now().minus(Duration.ofMinutes(10)).minusSeconds(1).toEpochMilli());

    ApplicationFailure failure =
        batchFailureOf(
            () ->
                stub.processBatch(
                    new BatchWork(runId, "test.elsewhere", new BatchRef(1, 1, 10, 10))));

    assertThat(failure.getType()).isEqualTo(DriplineFailure.UNKNOWN_BACKFILL.name());
    assertThat(failure.isNonRetryable()).isTrue();
    assertThat(failure.getOriginalMessage())
        .contains("test.elsewhere")
        .contains("within 10m (dripline.engine.unknown-backfill-wait)");
    assertThat(fixtures.batchStatuses(runId)).containsExactly("enqueued");
  }

  private static ApplicationFailure batchFailureOf(Runnable call) {
    try {
      call.run();
    } catch (ActivityFailure failure) {
      if (failure.getCause() instanceof ApplicationFailure application) {
        return application;
      }
      throw failure;
    }
    throw new AssertionError("the batch did not fail");
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
