package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.activities.testing.RowsBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link dev.dripline.spi.TransactionalBackfillDefinition}'s batch writes commit with the batch's
 * completion (and its chain's next claim), or not at all.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class TransactionalBatchIT {
  private static final long CHAIN_MILLIS = 60_000;

  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject RowsBackfill rows;

  @AfterEach
  void cleanUp() {
    rows.afterWrites(null);
    fixtures.deleteCreated();
  }

  /** Batches 1..count of 10 keys; batch 1 enqueued (claimed by the workflow), the rest pending. */
  private long runWithBatches(String options, int count) {
    long runId = fixtures.run("running", options, 10, null);
    fixtures.batches(runId, count, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "enqueued");
    return runId;
  }

  private static BatchWork head(long runId, long chainMillis) {
    return new BatchWork(runId, RowsBackfill.NAME, new BatchRef(1, 1, 10, 10), 1, chainMillis);
  }

  @Test
  void aChainCommitsEachBatchsWritesWithItsCompletion() {
    long runId = runWithBatches("{\"items\":40}", 4);

    BatchResult result = execution.process(head(runId, CHAIN_MILLIS));

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 3, 30, null, null, false));
    assertThat(fixtures.batchStatuses(runId)).containsOnly("completed");
    assertThat(rows.rows(runId, 1, 40)).isEqualTo(40);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 40L);
  }

  @Test
  void aFailedChainedBatchCommitsNoneOfItsWrites() {
    long runId = runWithBatches("{\"items\":40,\"failKey\":25}", 4);

    BatchResult result = execution.process(head(runId, CHAIN_MILLIS));

    assertThat(result.chainedBatches()).isEqualTo(1);
    assertThat(result.handoff()).isEqualTo(new BatchRef(3, 21, 30, 10));
    assertThat(result.handoffError()).contains("disk full");
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("completed", "completed", "running", "pending");
    assertThat(rows.rows(runId, 1, 20)).isEqualTo(20);
    assertThat(rows.rows(runId, 21, 40)).isZero();
    assertThat(fixtures.batchRows(runId).get(2).get("error")).asString().contains("disk full");
  }

  @Test
  void aChainThatHandsABatchBackReleasesAnyOtherItHolds() {
    long runId = runWithBatches("{\"items\":40,\"failKey\":25}", 4);
    BatchAttempt attempt = BatchAttempt.standalone(Duration.ofMinutes(1));
    // As if a record of this chain had committed unseen with the claim of batch 4.
    rows.afterWrites(
        range -> {
          if (range.startKey() == 21) {
            fixtures.update(
                "update batches set status = 'running', chain_head = 1, holder = ?,"
                    + " lease_until = now() + interval '1 minute' where run_id = ? and number = 4",
                attempt.holder(),
                runId);
          }
        });

    BatchResult result = execution.process(head(runId, CHAIN_MILLIS), attempt);

    assertThat(result.handoff()).isEqualTo(new BatchRef(3, 21, 30, 10));
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("completed", "completed", "running", "pending");
    assertThat(fixtures.batchRows(runId).get(3)).containsEntry("chain_head", null);
  }

  @Test
  void aChainedBatchThatLostItsSlotWhileWritingCommitsNothing() {
    long runId = runWithBatches("{\"items\":40}", 4);
    // The run's slots are recovered while batch 2 writes: its record fails, COMMIT and all.
    rows.afterWrites(
        range -> {
          if (range.startKey() == 11) {
            fixtures.setBatchStatus(runId, 2, "pending");
          }
        });

    BatchResult result = execution.process(head(runId, CHAIN_MILLIS));

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 0, 0, null, null, false));
    assertThat(rows.rows(runId, 1, 10)).isEqualTo(10);
    assertThat(rows.rows(runId, 11, 40)).isZero();
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("completed", "pending", "pending", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  @Test
  void aFailedHeadBatchCommitsNoneOfItsWrites() {
    long runId = runWithBatches("{\"items\":20,\"failKey\":5}", 2);

    assertThatThrownBy(() -> execution.process(head(runId, CHAIN_MILLIS)))
        .isInstanceOf(ApplicationFailure.class)
        .hasMessageContaining("disk full");

    assertThat(rows.rows(runId, 1, 20)).isZero();
    assertThat(fixtures.batchStatuses(runId)).containsExactly("running", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 0L);
  }

  @Test
  void aBatchThatLostItsSlotWhileWritingCommitsNothing() {
    long runId = runWithBatches("{\"items\":20}", 2);
    // The run's slots are recovered while batch 1 writes: its completion is refused.
    rows.afterWrites(range -> fixtures.setBatchStatus(runId, 1, "pending"));

    BatchResult result = execution.process(head(runId, 0));

    assertThat(result.outcome()).isEqualTo(BatchOutcome.SKIPPED);
    assertThat(rows.rows(runId, 1, 10)).isZero();
    assertThat(fixtures.batchStatuses(runId)).containsExactly("pending", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 0L);
  }

  @Test
  void aBatchWhoseConnectionDiesBeforeItsRecordRunsAgainInTheSameAttempt() {
    long runId = runWithBatches("{\"items\":20}", 2);
    // The batch's connection is terminated after its writes: the record, a repository call in its
    // transaction, finds it gone, which is an outage to wait out, not the batch's failure.
    AtomicBoolean terminated = new AtomicBoolean();
    rows.afterWrites(
        range -> {
          if (terminated.compareAndSet(false, true)) {
            assertThat(
                    fixtures.row(
                        "select count(*) filter (where pg_terminate_backend(pid)) as n"
                            + " from pg_stat_activity where datname = current_database()"
                            + " and pid <> pg_backend_pid() and state = 'idle in transaction'"
                            + " and query like 'insert into test_rows%'"))
                .containsEntry("n", 1L);
            try {
              Thread.sleep(200);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });

    BatchResult result = execution.process(head(runId, 0));

    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(terminated).isTrue();
    assertThat(rows.rows(runId, 1, 10)).isEqualTo(10);
    assertThat(fixtures.batchRows(runId).get(0))
        .containsEntry("status", "completed")
        .containsEntry("attempts", 1);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }
}
