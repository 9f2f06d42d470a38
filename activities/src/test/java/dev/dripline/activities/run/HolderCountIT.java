package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.ChainStep;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.FinishRequest;
import dev.dripline.workflows.run.RequeueRequest;
import dev.dripline.workflows.run.RunRef;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run's slot holders are a kept count (migration V25: {@code run_key_counts.holders}, written by
 * the triggers on {@code batches}), read by {@code dripline_slot_holders}; after every path that
 * moves a batch into or out of holding a slot, the count equals the run's batches {@code enqueued}
 * or {@code running}.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class HolderCountIT {
  private static final long LEASE_MILLIS = 60_000;

  @Inject RunActivitiesImpl activities;
  @Inject BatchExecution execution;
  @Inject BatchRepository batches;
  @Inject RunFixtures fixtures;
  @Inject Database database;

  private final AtomicLong tokens = new AtomicLong(1);

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  private long keptHolders(long runId) {
    return ((Number) fixtures.row("select dripline_slot_holders(?) as n", runId).get("n"))
        .longValue();
  }

  private long countedHolders(long runId) {
    return ((Number)
            fixtures
                .row(
                    "select count(*) as n from batches where run_id = ?"
                        + " and status in ('enqueued', 'running')",
                    runId)
                .get("n"))
        .longValue();
  }

  /** The kept count equals the counted holders, which are {@code expected}. */
  private void assertHolders(long runId, long expected, String after) {
    assertThat(countedHolders(runId)).as("holders counted after %s", after).isEqualTo(expected);
    assertThat(keptHolders(runId)).as("holders kept after %s", after).isEqualTo(expected);
  }

  private List<Integer> claim(long runId, int limit) {
    return activities
        .claimPending(new ClaimRequest(runId, tokens.incrementAndGet(), limit))
        .batches()
        .stream()
        .map(BatchRef::number)
        .toList();
  }

  private void expireLease(long runId, int number) {
    fixtures.update(
        "update batches set lease_until = now() - interval '1 second'"
            + " where run_id = ? and number = ?",
        runId,
        number);
  }

  @Test
  void theKeptCountEqualsTheHoldersThroughEveryPath() {
    long runId = fixtures.runningRun(300, 10);
    fixtures.batches(runId, 30, 10, "pending");
    fixtures.update("update runs set max_parallel_batches = 10 where id = ?", runId);
    assertHolders(runId, 0, "the run's insert");

    // The workflow's claim.
    assertThat(claim(runId, 3)).containsExactly(1, 2, 3);
    assertHolders(runId, 3, "the claim");

    // An attempt starts (enqueued -> running: still a holder) and completes.
    assertThat(batches.startHead(runId, 1, "h1", LEASE_MILLIS)).isPresent();
    assertHolders(runId, 3, "an attempt's start");
    batches.complete(runId, 1, "h1", ShardedCounters.shardOf(1));
    assertHolders(runId, 2, "a completion");

    // A chained completion takes the next batch in the same transaction: net zero.
    assertThat(batches.startHead(runId, 2, "h2", LEASE_MILLIS)).isPresent();
    ChainStep step =
        batches.completeAndClaimNext(
            runId, 2, "h2", ShardedCounters.shardOf(2), 2, LEASE_MILLIS, 1);
    assertThat(step.number()).isEqualTo(4);
    assertHolders(runId, 2, "a chained completion that took its next batch");

    // A chain that holds no batch claims one.
    assertThat(batches.claimNext(runId, 20, 2, "h3", LEASE_MILLIS)).isPresent();
    assertHolders(runId, 3, "a chain's claim");

    // A failed attempt's record keeps its batch holding (running) until its failure is recorded.
    assertThat(batches.recordAttemptFailed(runId, 4, "h2", "boom", true)).isEqualTo(1);
    assertHolders(runId, 3, "a failed attempt's record");

    // The failure of the chain's head releases what its chain held (batch 4, lease run out).
    expireLease(runId, 4);
    activities.recordBatchFailure(new BatchFailure(runId, 2, "boom"));
    assertThat(fixtures.batchRows(runId).get(3)).containsEntry("status", "pending");
    assertHolders(runId, 2, "the release of a failed chain");

    // A batch's failure.
    activities.recordBatchFailure(new BatchFailure(runId, 3, "boom"));
    assertThat(fixtures.batchRows(runId).get(2)).containsEntry("status", "failed");
    assertHolders(runId, 1, "a batch's failure");

    // A chain gives back what it holds.
    assertThat(batches.releaseHeldByChain(runId, 20, 0, "h3")).isEqualTo(1);
    assertHolders(runId, 0, "a chain's release");

    // Lease recovery: an enqueued batch and a running one whose lease ran out go back to pending.
    List<Integer> claimed = claim(runId, 3);
    assertThat(claimed).hasSize(3);
    assertThat(batches.startHead(runId, claimed.get(0), "h4", LEASE_MILLIS)).isPresent();
    assertThat(batches.startHead(runId, claimed.get(1), "h5", LEASE_MILLIS)).isPresent();
    expireLease(runId, claimed.get(0));
    assertHolders(runId, 3, "a second claim");
    assertThat(activities.recoverSlots(new RunRef(runId))).isEqualTo(2);
    assertHolders(runId, 1, "lease recovery");

    // A stop: pending batches stop, holders finish on their own.
    claim(runId, 2);
    assertHolders(runId, 3, "a third claim");
    assertThat(activities.finish(new FinishRequest(runId, true, null)).finished()).isFalse();
    assertHolders(runId, 3, "a stop");
    fixtures.update(
        "update batches set lease_until = now() - interval '1 second'"
            + " where run_id = ? and status = 'running'",
        runId);
    for (int number : holding(runId)) {
      activities.recordBatchFailure(new BatchFailure(runId, number, "boom"));
    }
    assertHolders(runId, 0, "the failures of the stopped run's holders");

    // A retry's re-queue of the stopped run, then a claim.
    assertThat(activities.finish(new FinishRequest(runId, true, null)).finished()).isTrue();
    assertThat(activities.requeue(new RequeueRequest(runId, "retry-1")).requeued()).isPositive();
    assertHolders(runId, 0, "a re-queue");
    assertThat(claim(runId, 4)).hasSize(4);
    assertHolders(runId, 4, "a claim after the re-queue");

    // A batch deleted, then the run with its batches and counters.
    fixtures.update(
        "delete from batches where run_id = ? and number = ?", runId, holding(runId).get(0));
    assertHolders(runId, 3, "a holder's deletion");
    fixtures.update("update runs set status = 'failed' where id = ?", runId);
    fixtures.deleteCreated();
    assertThat(
            ((Number)
                    fixtures
                        .row("select count(*) as n from run_key_counts where run_id = ?", runId)
                        .get("n"))
                .longValue())
        .as("counter rows of the deleted run")
        .isZero();
  }

  @Test
  void aChainThroughBatchExecutionLeavesTheCountExact() {
    long runId = fixtures.run("running", "{\"items\":50}", 10, null);
    fixtures.batches(runId, 5, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "enqueued");
    assertHolders(runId, 1, "a holder set by an UPDATE of its own");

    BatchResult result =
        execution.process(
            new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10), 1, 60_000));

    assertThat(result.outcome()).isEqualTo(BatchOutcome.COMPLETED);
    assertThat(fixtures.batchStatuses(runId)).containsOnly("completed");
    assertHolders(runId, 0, "the chain");
  }

  /**
   * Chains of one run completing and claiming at once, from several sessions: each session's
   * holders go to its own shard, and the sum stays exact and within the cap.
   */
  @Test
  void concurrentChainsKeepTheCountExactAndWithinTheCap() throws Exception {
    int cap = 4;
    long runId = fixtures.runningRun(2_000, 10);
    fixtures.batches(runId, 200, 10, "pending");
    fixtures.update("update runs set max_parallel_batches = ? where id = ?", cap, runId);
    AtomicInteger overCap = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<Integer>> chains = new ArrayList<>();
      for (int lane = 1; lane <= 6; lane++) {
        int head = 1_000 + lane;
        int laneOf = lane;
        String holder = "chain-" + lane;
        chains.add(
            pool.submit(
                () -> {
                  int done = 0;
                  var next = batches.claimNext(runId, head, laneOf, holder, LEASE_MILLIS);
                  Integer number = next.map(b -> b.number()).orElse(null);
                  while (number != null) {
                    if (keptHolders(runId) > cap) {
                      overCap.incrementAndGet();
                    }
                    ChainStep step =
                        batches.completeAndClaimNext(
                            runId,
                            number,
                            holder,
                            ShardedCounters.shardOf(number),
                            head,
                            LEASE_MILLIS,
                            laneOf);
                    done++;
                    number = step.number();
                  }
                  return done;
                }));
      }
      int completed = 0;
      for (Future<Integer> chain : chains) {
        completed += chain.get(120, TimeUnit.SECONDS);
      }
      assertThat(completed).isPositive();
    } finally {
      pool.shutdownNow();
    }

    assertThat(overCap.get()).as("counts above the cap").isZero();
    assertHolders(runId, 0, "the chains ended");
  }

  /**
   * A completion, chained or not, writes its counter row twice (its holder, its keys) and never
   * waits for its run's row, which a claim holds while it waits for counter rows: with the
   * counters' foreign key to {@code runs}, the check on the second write locked the run's row (FOR
   * KEY SHARE) and W1 deadlocked hundreds of times.
   */
  @Test
  void aCompletionNeverWaitsForItsRunsRow() throws Exception {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    assertThat(batches.claimNext(runId, 1, 1, "h1", LEASE_MILLIS)).isPresent();
    assertThat(batches.claimNext(runId, 2, 2, "h2", LEASE_MILLIS)).isPresent();
    CountDownLatch locked = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    CompletableFuture<Void> claim = holdRunRow(runId, "for update", locked, done);
    try {
      assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Void> completions =
          CompletableFuture.runAsync(
              () -> {
                batches.complete(runId, 1, "h1", ShardedCounters.shardOf(1));
                batches.completeAndClaimNext(
                    runId, 2, "h2", ShardedCounters.shardOf(2), 2, LEASE_MILLIS, 2);
              });
      completions.get(10, TimeUnit.SECONDS);
    } finally {
      done.countDown();
      claim.get(30, TimeUnit.SECONDS);
    }
    assertHolders(runId, 1, "completions while the run's row was locked");
  }

  /**
   * A chain that holds no batch polls its run for one while planning catches up. With nothing
   * pending, its claim answers at once even while planning holds the run's row (its update of the
   * plan cursor, a no-key update): it does not queue on that lock, nor keep planning queued behind
   * it (migration V28). A claim that finds a batch pending still waits for the row, and claims once
   * it is free.
   */
  @Test
  void aChainClaimWithNothingPendingNeverWaitsForItsRunsRow() throws Exception {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 2, 10, "completed");
    CountDownLatch locked = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    CompletableFuture<Void> planning = holdRunRow(runId, "for no key update", locked, done);
    CompletableFuture<Boolean> pendingClaim;
    try {
      assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Boolean> idleClaim =
          CompletableFuture.supplyAsync(
              () -> batches.claimNext(runId, 1, 1, "h1", LEASE_MILLIS).isPresent());
      assertThat(idleClaim.get(20, TimeUnit.SECONDS)).isFalse();

      fixtures.update(
          "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
              + " values (?, 3, dripline_bigint_key(21), dripline_bigint_key(30), 10, 'pending')",
          runId);
      pendingClaim =
          CompletableFuture.supplyAsync(
              () -> batches.claimNext(runId, 1, 1, "h1", LEASE_MILLIS).isPresent());
      awaitClaimWaitingForALock();
      assertThat(holding(runId)).isEmpty();
    } finally {
      done.countDown();
      planning.get(30, TimeUnit.SECONDS);
    }
    assertThat(pendingClaim.get(30, TimeUnit.SECONDS)).isTrue();
    assertHolders(runId, 1, "a claim once the run's row was free");
  }

  private void awaitClaimWaitingForALock() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (((Number)
                fixtures
                    .row(
                        "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock'"
                            + " and query like '%dripline_claim_next%'"
                            + " and pid <> pg_backend_pid()")
                    .get("n"))
            .longValue()
        == 0) {
      assertThat(System.nanoTime() - deadline).as("a claim waiting for the run's row").isNegative();
      Thread.sleep(20);
    }
  }

  /**
   * Locks run {@code runId}'s row ({@code lock}: {@code "for update"}, {@code "for no key update"})
   * in a transaction of its own, counts {@code locked} down, and holds the row until {@code done}.
   */
  private CompletableFuture<Void> holdRunRow(
      long runId, String lock, CountDownLatch locked, CountDownLatch done) {
    return CompletableFuture.runAsync(
        () ->
            database.inTransaction(
                connection -> {
                  try (PreparedStatement row =
                      connection.prepareStatement("select id from runs where id = ? " + lock)) {
                    row.setLong(1, runId);
                    row.executeQuery().close();
                  }
                  locked.countDown();
                  return awaitQuietly(done);
                }));
  }

  private static boolean awaitQuietly(CountDownLatch latch) {
    try {
      return latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private List<Integer> holding(long runId) {
    return fixtures
        .rows(
            "select number from batches where run_id = ? and status in ('enqueued', 'running')"
                + " order by number",
            runId)
        .stream()
        .map(row -> ((Number) row.get("number")).intValue())
        .toList();
  }
}
