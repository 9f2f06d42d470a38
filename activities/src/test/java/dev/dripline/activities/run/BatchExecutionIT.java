package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.RunRef;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class BatchExecutionIT {
  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;
  @Inject RunActivitiesImpl runActivities;
  @Inject BatchRepository batches;

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
  void recoveringSlotsLeavesTheBatchOfALiveAttemptToIt() throws Exception {
    long runId = fixtures.runningRun(20, 10);
    fixtures.batches(runId, 2, 10, "enqueued");
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    keysBackfill.whileProcessing(range -> awaitQuietly(inside, release));
    CompletableFuture<BatchResult> attempt =
        CompletableFuture.supplyAsync(() -> execution.process(work(runId, 1, 10)));
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();

    // The run recovers what no live attempt holds: batch 2, enqueued for no activity.
    int recovered = runActivities.recoverSlots(new RunRef(runId));
    release.countDown();

    assertThat(recovered).isEqualTo(1);
    assertThat(attempt.get(30, TimeUnit.SECONDS))
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(fixtures.batchStatuses(runId)).containsExactly("completed", "pending");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  @Test
  void aSecondAttemptWaitsForALiveHolderInsteadOfRunningTheBatchAlongsideIt() throws Exception {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    AtomicInteger executing = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    keysBackfill.whileProcessing(
        range -> {
          mostAtOnce.accumulateAndGet(executing.incrementAndGet(), Math::max);
          try {
            awaitQuietly(inside, release);
          } finally {
            executing.decrementAndGet();
          }
        });
    // The first attempt hangs; Temporal, past its timeout, starts the second.
    CompletableFuture<BatchResult> first =
        CompletableFuture.supplyAsync(() -> execution.process(work(runId, 1, 10)));
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
    BatchAttempt second = BatchAttempt.standalone(Duration.ofMinutes(1));
    CompletableFuture<BatchResult> secondResult =
        CompletableFuture.supplyAsync(() -> execution.process(work(runId, 1, 10), second));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> second.holderWaits() >= 2 || mostAtOnce.get() > 1);
    release.countDown();

    assertThat(mostAtOnce.get()).as("attempts executing the batch at once").isEqualTo(1);
    assertThat(first.get(30, TimeUnit.SECONDS))
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(secondResult.get(30, TimeUnit.SECONDS))
        .isEqualTo(new BatchResult(BatchOutcome.ALREADY_COMPLETED, 10));
    assertThat(keysBackfill.timesProcessed(runId, 1)).isEqualTo(1);
  }

  @Test
  void anAttemptTakesOverABatchWhoseHoldersLeaseRanOut() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "running");
    fixtures.update(
        "update batches set holder = 'a dead attempt', attempts = 1,"
            + " lease_until = now() - interval '1 second' where run_id = ?",
        runId);

    assertThat(execution.process(work(runId, 1, 10)))
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(fixtures.batchRows(runId).get(0)).containsEntry("attempts", 2);
  }

  @Test
  void aFencedAttemptIsInterruptedRecordsNothingAndLetsTheNextTakeOver() throws Exception {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    keysBackfill.whileProcessing(range -> awaitQuietly(inside, never));
    BatchAttempt hung = BatchAttempt.standalone(Duration.ofMinutes(1));
    CompletableFuture<BatchResult> result =
        CompletableFuture.supplyAsync(() -> execution.process(work(runId, 1, 10), hung));
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();

    hung.fence(BatchAttempt.Fence.TIMED_OUT);

    assertThatThrownBy(() -> result.get(30, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ApplicationFailure.class);
    assertThat(fixtures.batchRows(runId).get(0)).containsEntry("status", "running");
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 0L);
    keysBackfill.whileProcessing(null);
    BatchAttempt next = BatchAttempt.standalone(Duration.ofMinutes(1));
    assertThat(execution.process(work(runId, 1, 10), next))
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(next.holderWaits()).as("the fenced attempt's lease ended with it").isZero();
  }

  /** Signals {@code inside}, then waits for {@code release}; ends early if interrupted. */
  private static void awaitQuietly(CountDownLatch inside, CountDownLatch release) {
    inside.countDown();
    try {
      release.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
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
  void onlyFailedAttemptsSpendTheBatchsAttemptsNeverOnesThatDiedWithTheirWorker() {
    long runId = fixtures.run("running", "{\"items\":30,\"failKey\":15}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");
    // Attempts the policy allows (the test environment's): 3.
    ApplicationFailure[] failures = new ApplicationFailure[3];
    for (int i = 0; i < failures.length; i++) {
      // An attempt took the batch and died with its worker: Temporal timed it out, nobody reported
      // a failure, and its lease ran out.
      fixtures.update(
          "update batches set status = 'running', holder = 'a dead attempt',"
              + " attempts = attempts + 1, lease_until = now() - interval '1 second'"
              + " where run_id = ? and number = 2",
          runId);
      failures[i] = failureOf(() -> execution.process(work(runId, 2, 10)));
    }

    assertThat(failures[0].isNonRetryable()).isFalse();
    assertThat(failures[0].getNextRetryDelay()).isEqualTo(Duration.ofSeconds(1));
    assertThat(failures[1].isNonRetryable()).isFalse();
    assertThat(failures[1].getNextRetryDelay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(failures[2].isNonRetryable()).as("the third failed attempt is the last").isTrue();
    assertThat(failures[2].getType()).isEqualTo(DriplineFailure.BATCH_FAILED.name());
    assertThat(failures[2].getOriginalMessage()).isEqualTo("IllegalStateException: database busy");
    assertThat(fixtures.batchRows(runId).get(1))
        .containsEntry("attempts", 6)
        .containsEntry("failed_attempts", 3);
  }

  @Test
  void anAttemptInterruptedByItsWorkerStoppingSpendsNoAttempt() throws Exception {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "enqueued");
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    keysBackfill.whileProcessing(range -> awaitQuietly(inside, never));
    CompletableFuture<Throwable> failure = new CompletableFuture<>();
    // A worker shutting down interrupts the threads of its activities (no fence of the engine's).
    Thread worker =
        new Thread(
            () -> {
              try {
                execution.process(work(runId, 1, 10));
                failure.complete(null);
              } catch (RuntimeException e) {
                failure.complete(e);
              }
            });
    worker.start();
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();

    worker.interrupt();

    assertThat(failure.get(30, TimeUnit.SECONDS))
        .isInstanceOfSatisfying(
            ApplicationFailure.class, f -> assertThat(f.isNonRetryable()).isFalse());
    assertThat(fixtures.batchRows(runId).get(0))
        .containsEntry("status", "running")
        .containsEntry("attempts", 1)
        .containsEntry("failed_attempts", 0);
    assertThat((String) fixtures.batchRows(runId).get(0).get("error"))
        .startsWith("attempt interrupted (worker stopping)");
  }

  /**
   * F6 on a busy machine: a hung batch's last allowed attempt was fenced at its deadline and
   * recorded its failure, but Temporal had timed it out first, so it never heard and tried again.
   */
  @Test
  void aRetryOfABatchWhoseAttemptsAreAllFailedFailsItWithoutRunningIt() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "running");
    fixtures.update(
        "update batches set holder = 'the last attempt', attempts = 3, failed_attempts = 3,"
            + " error = 'attempt stopped (TIMED_OUT): InterruptedException: sleep interrupted',"
            + " lease_until = now() - interval '1 second' where run_id = ?",
        runId);
    BatchAttempt retry = new BatchAttempt("a retry", Duration.ofMinutes(1), true);

    ApplicationFailure failure = failureOf(() -> execution.process(work(runId, 1, 10), retry));

    assertThat(failure.isNonRetryable()).isTrue();
    assertThat(failure.getOriginalMessage()).startsWith("attempt stopped (TIMED_OUT)");
    assertThat(keysBackfill.timesProcessed(runId, 1)).isZero();
    assertThat(fixtures.batchRows(runId).get(0)).containsEntry("attempts", 3);
  }

  /**
   * W1 run 169 (docs/benchmarks.md): a chained batch's record died in a deadlock while the lease
   * thread's renewal of that batch waited for its row; the renewal landed after the failure was
   * recorded and gave the attempt, which had stopped working on the batch, a fresh lease, so the
   * attempt that took over waited 30 s for it to run out.
   */
  @Test
  void aRenewalThatLandsAfterTheFailureIsRecordedKeepsNoLeaseAlive() {
    long runId = fixtures.run("running", "{\"items\":30,\"failKey\":15}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");
    BatchAttempt failed = new BatchAttempt("the failed attempt", Duration.ofMinutes(1));
    failureOf(() -> execution.process(work(runId, 2, 10), failed));

    // The renewal its lease thread sent while the attempt still held the batch.
    batches.renewLease(runId, 2, failed.holder(), failed.lease().toMillis());

    assertThat(batches.heldLive(runId, 2, null)).as("live holders of the failed batch").isZero();
    BatchAttempt next = new BatchAttempt("the next attempt", Duration.ofMinutes(1));
    failureOf(() -> execution.process(work(runId, 2, 10), next));
    assertThat(next.holderWaits()).as("waits of the next attempt for a holder").isZero();
    assertThat(fixtures.batchRows(runId).get(1))
        .containsEntry("attempts", 2)
        .containsEntry("failed_attempts", 2);
  }

  /**
   * Concurrent completions of a run deadlock now and then in their counters' upsert ({@code
   * run_key_counts}; W1 retried 1 to 5 no-op batches per 10,000): PostgreSQL rolls the victim's
   * record back whole, so the attempt records its batch again instead of spending one of the
   * batch's attempts and a round trip through Temporal on it.
   */
  @Test
  @SuppressWarnings("try") // the injected deadlock is held for the block
  void aRecordRolledBackAsADeadlocksVictimIsRecordedAgainInTheSameAttempt() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 3, 10, "enqueued");
    BatchResult result;
    try (RunFixtures.Undo deadlock = fixtures.deadlockCounterRecord(1)) {
      result = execution.process(work(runId, 2, 10));
    }

    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(fixtures.batchRows(runId).get(1))
        .containsEntry("status", "completed")
        .containsEntry("attempts", 1)
        .containsEntry("failed_attempts", 0);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }

  private static ApplicationFailure failureOf(Runnable attempt) {
    try {
      attempt.run();
    } catch (ApplicationFailure failure) {
      return failure;
    }
    throw new AssertionError("the attempt did not fail");
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

  @Test
  void aRecordThatFindsItsConnectionGoneIsWaitedOutInTheSameAttempt() throws Exception {
    long runId = fixtures.run("running", "{\"items\":30}", 10, null);
    fixtures.batches(runId, 3, 10, "enqueued");
    // While the definition runs, PostgreSQL drops the pool's idle connections (terminated from a
    // connection of its own): the record, a repository call in auto-commit, takes the one this
    // thread used last (the pool checks no connection used in the last 500 ms) and finds it gone,
    // an outage to wait out: the batch completes once, in this attempt.
    AtomicInteger terminated = new AtomicInteger(-1);
    keysBackfill.whileProcessing(
        range -> {
          if (terminated.get() >= 0) {
            return;
          }
          try (Connection admin =
                  DriverManager.getConnection(
                      System.getenv("DRIPLINE_TEST_DB_URL"),
                      System.getenv("DRIPLINE_TEST_DB_USER"),
                      System.getenv("DRIPLINE_TEST_DB_PASSWORD"));
              Statement statement = admin.createStatement();
              ResultSet killed =
                  statement.executeQuery(
                      "select count(*) filter (where pg_terminate_backend(pid))"
                          + " from pg_stat_activity where datname = current_database()"
                          + " and pid <> pg_backend_pid() and state = 'idle'")) {
            killed.next();
            terminated.set(killed.getInt(1));
            Thread.sleep(50);
          } catch (SQLException e) {
            throw new IllegalStateException(e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });

    BatchResult result = execution.process(work(runId, 2, 10));

    assertThat(terminated.get()).isPositive();
    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    assertThat(fixtures.batchRows(runId).get(1))
        .containsEntry("status", "completed")
        .containsEntry("attempts", 1);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }
}
