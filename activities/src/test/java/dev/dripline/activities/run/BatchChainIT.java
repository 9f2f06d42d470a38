package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Chains: one batch activity going on with the run's pending batches in its own slot. */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class BatchChainIT {
  private static final long CHAIN_MILLIS = 60_000;

  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;
  @Inject Database database;

  @AfterEach
  void cleanUp() {
    keysBackfill.whileProcessing(null);
    fixtures.deleteCreated();
  }

  /**
   * Batches 1..count of 10 keys; {@code head} enqueued (claimed by the workflow), the rest pending.
   */
  private long runWithBatches(String options, int count, int head) {
    long runId = fixtures.run("running", options, 10, null);
    fixtures.batches(runId, count, 10, "pending");
    fixtures.setBatchStatus(runId, head, "enqueued");
    return runId;
  }

  private static BatchWork chain(long runId, int head, int lane) {
    long start = (long) (head - 1) * 10 + 1;
    return new BatchWork(
        runId, KeysBackfill.NAME, new BatchRef(head, start, start + 9, 10), lane, CHAIN_MILLIS);
  }

  private List<String> statuses(long runId) {
    return fixtures.batchStatuses(runId);
  }

  @Test
  void goesOnWithPendingBatchesInOrderAndCountsEachOnce() {
    long runId = runWithBatches("{\"items\":50}", 5, 2);

    BatchResult result = execution.process(chain(runId, 2, 1));

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 4, 40, null, null, false));
    assertThat(statuses(runId)).containsOnly("completed");
    for (long start = 1; start <= 41; start += 10) {
      assertThat(keysBackfill.timesProcessed(runId, start)).isEqualTo(1);
    }
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 50L);
    assertThat(
            fixtures.row(
                "select sum(completed_batches)::bigint as n from run_key_counts where run_id = ?",
                runId))
        .containsEntry("n", 5L);
    // Chained batches name the head they were chained to; each had one attempt.
    Map<String, Object> chained = fixtures.batchRows(runId).get(0);
    assertThat(chained).containsEntry("chain_head", 2).containsEntry("attempts", 1);
    assertThat(chained.get("enqueued_at")).isNotNull();
  }

  /**
   * A chained batch's record (its completion and the next claim, one statement) rolled back as a
   * deadlock's victim is recorded again by the chain: no failed attempt, no hand-off.
   */
  @Test
  @SuppressWarnings("try") // the injected deadlock is held for the block
  void aChainedRecordRolledBackAsADeadlocksVictimIsRecordedAgainInTheChain() {
    long runId = runWithBatches("{\"items\":30}", 3, 1);

    BatchResult result;
    // The head's record is the first, batch 2's the second.
    try (RunFixtures.Undo deadlock = fixtures.deadlockCounterRecord(2)) {
      result = execution.process(chain(runId, 1, 1));
    }

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 2, 20, null, null, false));
    assertThat(statuses(runId)).containsOnly("completed");
    for (Map<String, Object> batch : fixtures.batchRows(runId)) {
      assertThat(batch).containsEntry("attempts", 1).containsEntry("failed_attempts", 0);
    }
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 30L);
  }

  @Test
  void takesNoFurtherBatchWhenPausedStoppingOrBeyondTheCap() {
    long paused = runWithBatches("{\"items\":30}", 3, 1);
    fixtures.setRunStatus(paused, "paused");
    long stopping = runWithBatches("{\"items\":30}", 3, 1);
    fixtures.update("update runs set stop_requested_at = now() where id = ?", stopping);
    long capped = runWithBatches("{\"items\":30}", 3, 1);
    fixtures.update("update runs set max_parallel_batches = 2 where id = ?", capped);

    // The head batch holds its slot and finishes in every case (R7, R9); nothing more starts.
    assertThat(execution.process(chain(paused, 1, 1)).chainedBatches()).isZero();
    assertThat(execution.process(chain(stopping, 1, 1)).chainedBatches()).isZero();
    assertThat(execution.process(chain(capped, 1, 3)).chainedBatches()).isZero();
    assertThat(statuses(paused)).containsExactly("completed", "pending", "pending");
    assertThat(statuses(stopping)).containsExactly("completed", "pending", "pending");
    assertThat(statuses(capped)).containsExactly("completed", "pending", "pending");

    // Lane 2 is within the lowered cap of 2: it chains.
    fixtures.setBatchStatus(capped, 2, "enqueued");
    assertThat(execution.process(chain(capped, 2, 2)).chainedBatches()).isEqualTo(1);
    assertThat(statuses(capped)).containsOnly("completed");
  }

  @Test
  void aChainPausedWhileABatchRunsFinishesThatBatchAndTakesNoOther() {
    long runId = runWithBatches("{\"items\":40}", 4, 1);
    keysBackfill.whileProcessing(
        range -> {
          if (range.startKey() == 11) {
            fixtures.setRunStatus(runId, "paused");
          }
        });

    BatchResult result = execution.process(chain(runId, 1, 1));

    // Batch 2's completion and the (refused) claim of batch 3 are one statement.
    assertThat(result.chainedBatches()).isEqualTo(1);
    assertThat(statuses(runId)).containsExactly("completed", "completed", "pending", "pending");
  }

  @Test
  void aChainedBatchThatLostItsSlotRecordsNothingAndClaimsNothing() {
    long runId = runWithBatches("{\"items\":40}", 4, 1);
    // The run's slots are recovered while batch 2 runs: it is pending again, nobody holds it.
    keysBackfill.whileProcessing(
        range -> {
          if (range.startKey() == 11) {
            fixtures.setBatchStatus(runId, 2, "pending");
          }
        });

    BatchResult result = execution.process(chain(runId, 1, 1));

    // Its completion is refused, and so is the claim that would have come with it: a claim
    // committed without the chain going on would leave a batch running with nobody on it.
    assertThat(result.chainedBatches()).isZero();
    assertThat(statuses(runId)).containsExactly("completed", "pending", "pending", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  @Test
  void aChainTakesNoBatchWhileTheRunsSlotHoldersReachItsCap() {
    // Cap 2; batches 2 and 3 are held by attempts the workflow does not know of (a lost history's
    // chains): the chain's lane is within the cap, but the slots are not free.
    long runId = runWithBatches("{\"items\":50}", 5, 1);
    fixtures.update("update runs set max_parallel_batches = 2 where id = ?", runId);
    fixtures.update(
        "update batches set status = 'running', holder = 'another attempt',"
            + " lease_until = now() + interval '1 minute' where run_id = ? and number in (2, 3)",
        runId);

    BatchResult result = execution.process(chain(runId, 1, 1));

    assertThat(result.outcome()).isEqualTo(BatchOutcome.COMPLETED);
    assertThat(result.chainedBatches()).isZero();
    assertThat(statuses(runId))
        .containsExactly("completed", "running", "running", "pending", "pending");
  }

  @Test
  void aChainGoesOnInTheSlotItHoldsWhenTheRunIsAtItsCap() {
    // Cap 2 and both slots held, one by this chain: completing a batch and taking the next in one
    // statement keeps the number of holders, so the chain goes on.
    long runId = runWithBatches("{\"items\":40}", 4, 1);
    fixtures.update("update runs set max_parallel_batches = 2 where id = ?", runId);
    fixtures.update(
        "update batches set status = 'running', holder = 'another attempt',"
            + " lease_until = now() + interval '1 minute' where run_id = ? and number = 4",
        runId);

    BatchResult result = execution.process(chain(runId, 1, 1));

    assertThat(result.chainedBatches()).isEqualTo(2);
    assertThat(statuses(runId)).containsExactly("completed", "completed", "completed", "running");
  }

  @Test
  void aFencedAttemptRecordsNothingMoreAndTakesNoFurtherBatch() {
    long runId = runWithBatches("{\"items\":30}", 3, 1);
    BatchAttempt attempt = BatchAttempt.standalone(Duration.ofMinutes(1));
    // Temporal rejects the attempt's heartbeat while its first chained batch runs.
    keysBackfill.whileProcessing(
        range -> {
          if (range.startKey() == 11) {
            attempt.fence(BatchAttempt.Fence.REJECTED);
          }
        });

    BatchResult result = execution.process(chain(runId, 1, 1), attempt);

    assertThat(result.chainedBatches()).isZero();
    assertThat(result.handoff().number()).isEqualTo(2);
    assertThat(statuses(runId)).containsExactly("completed", "running", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
    // Its lease ended with it: the next attempt takes the batch over at once.
    assertThat(
            fixtures
                .row(
                    "select lease_until <= now() as over from batches where run_id = ? and number = 2",
                    runId)
                .get("over"))
        .isEqualTo(true);
  }

  @Test
  void aChainFencedWhileClaimingItsNextBatchNeverRunsIt() throws Exception {
    long runId = runWithBatches("{\"items\":30}", 3, 1);
    BatchAttempt attempt = BatchAttempt.standalone(Duration.ofMinutes(1));
    // Batch 2's row is locked once its work is done, so its record (which completes it and claims
    // batch 3) waits on the lock: the attempt is fenced while that statement is in flight.
    AtomicReference<Connection> locker = new AtomicReference<>();
    keysBackfill.whileProcessing(
        range -> {
          if (range.startKey() == 11) {
            locker.set(lockBatch(runId, 2));
          }
        });
    BatchResult fenced;
    try {
      CompletableFuture<BatchResult> chain =
          CompletableFuture.supplyAsync(() -> execution.process(chain(runId, 1, 1), attempt));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> locker.get() != null && blockedBy(backendPid(locker.get())));
      attempt.fence(BatchAttempt.Fence.REJECTED);
      locker.get().rollback();
      fenced = chain.get(30, TimeUnit.SECONDS);
    } finally {
      if (locker.get() != null) {
        locker.get().close();
      }
    }

    // Batch 2's record committed (it still held its slot) and claimed batch 3; the fenced attempt
    // did not start the definition on it, and gave it back rather than hand it on.
    assertThat(keysBackfill.timesProcessed(runId, 21)).isZero();
    assertThat(fenced.chainedBatches()).isEqualTo(1);
    assertThat(fenced.handoff()).isNull();
    assertThat(statuses(runId)).containsExactly("completed", "completed", "pending");
    assertThat(fixtures.batchRows(runId).get(2)).containsEntry("failed_attempts", 0);

    // Temporal's retry of the activity runs batch 3, once.
    BatchResult retried =
        execution.process(chain(runId, 1, 1), BatchAttempt.standalone(Duration.ofMinutes(1)));

    assertThat(retried.chainedBatches()).isEqualTo(1);
    assertThat(keysBackfill.timesProcessed(runId, 21)).isEqualTo(1);
    assertThat(statuses(runId)).containsOnly("completed");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 30L);
  }

  /** A connection whose open transaction holds batch {@code number}'s row lock. */
  private Connection lockBatch(long runId, int number) {
    try {
      Connection connection = database.dataSource().getConnection();
      connection.setAutoCommit(false);
      try (PreparedStatement lock =
          connection.prepareStatement(
              "select 1 from batches where run_id = ? and number = ? for update")) {
        lock.setLong(1, runId);
        lock.setInt(2, number);
        lock.executeQuery().close();
      }
      return connection;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int backendPid(Connection connection) throws SQLException {
    try (PreparedStatement pid = connection.prepareStatement("select pg_backend_pid()");
        ResultSet row = pid.executeQuery()) {
      row.next();
      return row.getInt(1);
    }
  }

  /** Whether a session waits for a lock that backend {@code pid} holds. */
  private boolean blockedBy(int pid) {
    return (Long)
            fixtures
                .row(
                    "select count(*) as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))",
                    pid)
                .get("n")
        > 0;
  }

  @Test
  void aFailedChainedBatchIsHandedBackStillHoldingTheSlot() {
    long runId = runWithBatches("{\"items\":40,\"failKey\":25}", 4, 1);

    BatchResult result = execution.process(chain(runId, 1, 1));

    assertThat(result.chainedBatches()).isEqualTo(1);
    assertThat(result.chainedKeys()).isEqualTo(10);
    assertThat(result.handoff()).isEqualTo(new BatchRef(3, 21, 30, 10));
    assertThat(result.handoffError()).contains("database busy");
    assertThat(result.handoffPermanent()).isFalse();
    assertThat(statuses(runId)).containsExactly("completed", "completed", "running", "pending");
    assertThat(fixtures.batchRows(runId).get(2))
        .containsEntry("attempts", 1)
        .containsEntry("chain_head", 1);
    assertThat(fixtures.batchRows(runId).get(2).get("error")).isNotNull();
  }

  @Test
  void aRetriedAttemptFinishesTheBatchItsChainHeldFirst() {
    // Batch 1 (the head) completed and batch 3 was chained to it when its worker died.
    long runId = runWithBatches("{\"items\":40}", 4, 1);
    fixtures.setBatchStatus(runId, 1, "completed");
    fixtures.update(
        "update batches set status = 'running', chain_head = 1, attempts = 1"
            + " where run_id = ? and number = 3",
        runId);

    BatchResult result = execution.process(chain(runId, 1, 1));

    assertThat(result.outcome()).isEqualTo(BatchOutcome.ALREADY_COMPLETED);
    // Batch 3 first (it held the slot), then the pending ones.
    assertThat(result.chainedBatches()).isEqualTo(3);
    assertThat(statuses(runId)).containsOnly("completed");
    assertThat(fixtures.batchRows(runId).get(2)).containsEntry("attempts", 2);
    assertThat(keysBackfill.timesProcessed(runId, 21)).isEqualTo(1);
  }

  @Test
  void aChainedBatchThatLostItsDatabaseConnectionRunsAgainInTheSameChain() {
    long runId = runWithBatches("{\"items\":40,\"connectionLostKey\":25}", 4, 1);

    BatchResult result = execution.process(chain(runId, 1, 1));

    // PostgreSQL answered again at once: the chain resumed the batch it held and went on.
    assertThat(result.handoff()).isNull();
    assertThat(result.chainedBatches()).isEqualTo(3);
    assertThat(statuses(runId)).containsOnly("completed");
    assertThat(keysBackfill.timesProcessed(runId, 21)).isEqualTo(2);
    assertThat(keysBackfill.timesProcessed(runId, 31)).isEqualTo(1);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 40L);
    // Run again within the same attempt: the outage cost the batch no attempt (as for a head).
    assertThat(fixtures.batchRows(runId).get(2)).containsEntry("attempts", 1);
  }

  @Test
  void withoutChainTimeOnlyTheHeadRuns() {
    long runId = runWithBatches("{\"items\":30}", 3, 1);

    BatchResult result =
        execution.process(
            new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10), 1, 0));

    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(statuses(runId)).containsExactly("completed", "pending", "pending");
  }

  /**
   * Each chained batch leaves two dead row versions that the next claim works through until a
   * vacuum clears them (W3 in docs/benchmarks.md): migration V9 has autovacuum clear them every
   * 20,000, not at 20 % of a table that holds every run's history.
   */
  @Test
  void batchesAreAutovacuumedAfterAFixedNumberOfDeadRowVersions() {
    Map<String, Object> table =
        fixtures.row(
            "select reloptions::text as options from pg_class where oid = 'batches'::regclass");

    assertThat((String) table.get("options"))
        .contains("autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=20000");
  }
}
