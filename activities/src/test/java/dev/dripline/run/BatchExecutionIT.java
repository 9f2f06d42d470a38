package dev.dripline.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.testing.KeysBackfill;
import dev.dripline.testing.RunFixtures;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false)
class BatchExecutionIT {
  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;
  @Inject RunActivitiesImpl runActivities;

  @AfterEach
  void cleanUp() {
    keysBackfill.whileProcessing(null);
    fixtures.deleteCreated();
  }

  private static BatchWork work(long runId, int number, int size) {
    long start = (long) (number - 1) * size + 1;
    return new BatchWork(
        runId, KeysBackfill.NAME, new BatchRef(number, start, start + size - 1, size));
  }

  @Test
  void completesOnceAndCountsKeysOnce() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 3, 10, "enqueued");

    BatchResult first = execution.process(work(runId, 2, 10));
    BatchResult repeat = execution.process(work(runId, 2, 10));

    assertThat(first).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(repeat).isEqualTo(new BatchResult(BatchOutcome.ALREADY_COMPLETED, 10));
    assertThat(keysBackfill.timesProcessed(runId, 11)).isEqualTo(1);
    Map<String, Object> batch = fixtures.batchRows(runId).get(1);
    assertThat(batch)
        .containsEntry("status", "completed")
        .containsEntry("attempts", 1)
        .containsEntry("error", null);
    assertThat(batch.get("started_at")).isNotNull();
    assertThat(batch.get("finished_at")).isNotNull();
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  @Test
  void batchWithoutSlotIsSkipped() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 2, 10, "pending");
    fixtures.setBatchStatus(runId, 2, "stopped");

    assertThat(execution.process(work(runId, 1, 10)))
        .isEqualTo(new BatchResult(BatchOutcome.SKIPPED, 0));
    assertThat(execution.process(work(runId, 2, 10)))
        .isEqualTo(new BatchResult(BatchOutcome.SKIPPED, 0));
    assertThat(execution.process(work(-42, 1, 10)))
        .isEqualTo(new BatchResult(BatchOutcome.SKIPPED, 0));
    assertThat(keysBackfill.timesProcessed(runId, 1)).isZero();
  }

  @Test
  void aBatchThatLostItsSlotWhileRunningRecordsNothing() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 3, 10, "enqueued");
    // The run's slots are recovered while batch 2 runs: its record fails and commits nothing.
    keysBackfill.whileProcessing(range -> fixtures.setBatchStatus(runId, 2, "pending"));

    assertThat(execution.process(work(runId, 2, 10)))
        .isEqualTo(new BatchResult(BatchOutcome.SKIPPED, 0));
    assertThat(fixtures.batchRows(runId).get(1)).containsEntry("status", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 0L);
  }

  @Test
  void transientFailureIsRetryableAndLeavesTheSlotHeld() {
    long runId = fixtures.run("running", "{\"items\":30,\"failKey\":15}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");

    assertThatThrownBy(() -> execution.process(work(runId, 2, 10)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.BATCH_FAILED.name());
              assertThat(failure.isNonRetryable()).isFalse();
              assertThat(failure.getOriginalMessage())
                  .isEqualTo("IllegalStateException: database busy");
            });
    assertThatThrownBy(() -> execution.process(work(runId, 2, 10)))
        .isInstanceOf(ApplicationFailure.class);

    Map<String, Object> batch = fixtures.batchRows(runId).get(1);
    assertThat(batch)
        .containsEntry("status", "running")
        .containsEntry("attempts", 2)
        .containsEntry("error", "IllegalStateException: database busy");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 0L);
  }

  @Test
  void aBatchThatLostItsDatabaseConnectionRunsAgainInTheSameAttempt() {
    long runId = fixtures.run("running", "{\"items\":30,\"connectionLostKey\":15}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");

    BatchResult result = execution.process(work(runId, 2, 10));

    // PostgreSQL answered again at once: the outage cost the batch no attempt, counted once.
    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(keysBackfill.timesProcessed(runId, 11)).isEqualTo(2);
    assertThat(fixtures.batchRows(runId).get(1))
        .containsEntry("status", "completed")
        .containsEntry("attempts", 1);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  @Test
  void permanentFailureIsNotRetryable() {
    long runId = fixtures.run("running", "{\"items\":30,\"permanentKey\":3}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");

    assertThatThrownBy(() -> execution.process(work(runId, 1, 10)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.BATCH_PERMANENT.name());
              assertThat(failure.isNonRetryable()).isTrue();
            });
  }

  @Test
  void batchFailedAfterItsAttemptsIsNotRunAgain() {
    long runId = fixtures.run("running", "{\"items\":30,\"failKey\":15}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");
    assertThatThrownBy(() -> execution.process(work(runId, 2, 10)))
        .isInstanceOf(ApplicationFailure.class);

    runActivities.recordBatchFailure(new BatchFailure(runId, 2, "IllegalStateException: busy"));
    BatchResult late = execution.process(work(runId, 2, 10));

    assertThat(late).isEqualTo(new BatchResult(BatchOutcome.SKIPPED, 0));
    assertThat(keysBackfill.timesProcessed(runId, 11)).isEqualTo(1);
    assertThat(fixtures.batchRows(runId).get(1)).containsEntry("status", "failed");
  }
}
