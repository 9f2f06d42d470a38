package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.catalogue.CataloguePublisher;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchStart;
import dev.dripline.store.run.ChainStep;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.ClaimResult;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claim functions with pools (P5, migration V21): a batch needs a slot of its run's cap and of
 * its pool, in the workflow's claim and in a chain's; a freed pool slot goes to the run that has
 * waited longest; waiters that cannot take a slot never block the others.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class PoolClaimsIT {
  private static final String POOL = "pool-claims-it";

  @Inject RunActivitiesImpl activities;
  @Inject RunFixtures fixtures;
  @Inject CataloguePublisher catalogue;
  @Inject BatchRepository batches;

  private final AtomicLong tokens = new AtomicLong(1);

  @BeforeEach
  void publish() {
    catalogue.publish();
  }

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
    fixtures.update("delete from pools where name like ?", POOL + "%");
  }

  private void pool(String name, int size) {
    fixtures.update(
        "insert into pools (name, size) values (?, ?)"
            + " on conflict (name) do update set size = excluded.size",
        name,
        size);
  }

  /** A running run of the pool with {@code pending} pending batches (its cap: 5). */
  private long pooledRun(String pool, int pending) {
    long runId = fixtures.runningRun(pending * 10L, 10);
    fixtures.batches(runId, pending, 10, "pending");
    fixtures.update("update runs set pool = ? where id = ?", pool, runId);
    return runId;
  }

  private ClaimResult claim(long runId, int limit) {
    return activities.claimPending(new ClaimRequest(runId, tokens.incrementAndGet(), limit));
  }

  private long poolHolders(String pool) {
    return ((Number) fixtures.row("select dripline_pool_holders(?) as n", pool).get("n"))
        .longValue();
  }

  private void complete(long runId, List<BatchRef> claimed) {
    for (BatchRef batch : claimed) {
      fixtures.setBatchStatus(runId, batch.number(), "completed");
    }
  }

  @Test
  void aBatchNeedsASlotOfItsPoolAsWellAsOfItsRunsCap() {
    pool(POOL, 2);
    long runId = pooledRun(POOL, 10);

    ClaimResult first = claim(runId, 5);
    ClaimResult second = claim(runId, 5);

    assertThat(first.batches()).extracting(BatchRef::number).containsExactly(1, 2);
    assertThat(first.held()).isFalse();
    assertThat(second.batches()).isEmpty();
    assertThat(second.holds()).containsExactly("pool:" + POOL);
    assertThat(second.lookAgainMillis()).isEqualTo(RunActivitiesImpl.MIN_LOOK_MILLIS);
    // Waiting for a pool is not throttled time.
    assertThat(second.heldSinceMillis()).isNull();
    assertThat(fixtures.runRow(runId).get("held_since")).isNull();
    assertThat(poolHolders(POOL)).isEqualTo(2);
  }

  @Test
  void aRepeatedClaimOfAPooledRunAnswersItsBatchesAndTakesNoMoreSlots() {
    pool(POOL, 3);
    long runId = pooledRun(POOL, 10);
    long token = tokens.incrementAndGet();

    ClaimResult first = activities.claimPending(new ClaimRequest(runId, token, 2));
    ClaimResult again = activities.claimPending(new ClaimRequest(runId, token, 2));

    assertThat(again.batches()).isEqualTo(first.batches());
    assertThat(poolHolders(POOL)).isEqualTo(2);
  }

  @Test
  void aRunWithoutAPoolRowIsHeldUntilThePoolIsCreated() {
    long runId = pooledRun(POOL + "-missing", 3);

    assertThat(claim(runId, 3).holds()).containsExactly("pool:" + POOL + "-missing");

    pool(POOL + "-missing", 1);
    assertThat(claim(runId, 3).batches()).hasSize(1);
  }

  @Test
  void aFreedSlotGoesToTheRunThatHasWaitedLongest() {
    pool(POOL, 1);
    long a = pooledRun(POOL, 10);
    long b = pooledRun(POOL, 10);
    long c = pooledRun(POOL, 10);
    ClaimResult heldByA = claim(a, 1);
    assertThat(heldByA.batches()).hasSize(1);
    assertThat(claim(b, 1).held()).isTrue(); // B waits first,
    assertThat(claim(c, 1).held()).isTrue(); // then C.

    complete(a, heldByA.batches());
    // A asks first, but B and C have waited longer; C asks before B, but B has waited longest.
    assertThat(claim(a, 1).held()).isTrue();
    assertThat(claim(c, 1).held()).isTrue();
    ClaimResult heldByB = claim(b, 1);
    assertThat(heldByB.batches()).hasSize(1);

    complete(b, heldByB.batches());
    // Then C (waiting since before A waited again), then A, then B (served last).
    assertThat(claim(a, 1).held()).isTrue();
    ClaimResult heldByC = claim(c, 1);
    assertThat(heldByC.batches()).hasSize(1);
    complete(c, heldByC.batches());
    assertThat(claim(b, 1).held()).isTrue();
    assertThat(claim(a, 1).batches()).hasSize(1);
  }

  @Test
  void aRunServedFewerBatchesThanItAskedWaitsAgainBehindTheOthers() {
    pool(POOL, 2);
    long a = pooledRun(POOL, 10);
    long b = pooledRun(POOL, 10);
    ClaimResult first = claim(a, 4); // 2 of the 4 it asked: in line for the rest
    assertThat(first.batches()).hasSize(2);
    assertThat(first.slotsFull()).isTrue();
    assertThat(claim(b, 4).held()).isTrue();

    complete(a, first.batches());
    // A has waited longest, but B waits behind it: A takes one of the two free slots and queues
    // again behind B, which takes the other.
    assertThat(claim(a, 4).batches()).hasSize(1);
    assertThat(claim(a, 4).held()).isTrue();
    assertThat(claim(b, 4).batches()).hasSize(1);
    assertThat(poolHolders(POOL)).isEqualTo(2);
  }

  @Test
  void freeSlotsAreSharedWithTheRunsWaitingBehind() {
    pool(POOL, 2);
    long a = pooledRun(POOL, 10);
    long b = pooledRun(POOL, 10);
    ClaimResult first = claim(a, 2);
    assertThat(first.batches()).hasSize(2);
    assertThat(claim(b, 4).held()).isTrue();
    assertThat(claim(a, 2).held()).isTrue();

    complete(a, first.batches());
    // B is first in line and A waits behind it: B takes one of the two free slots, A the other.
    assertThat(claim(a, 2).held()).isTrue();
    assertThat(claim(b, 4).batches()).hasSize(1);
    assertThat(claim(a, 2).batches()).hasSize(1);
    assertThat(poolHolders(POOL)).isEqualTo(2);
  }

  @Test
  void waitersThatCannotTakeASlotDoNotBlockTheOthers() {
    pool(POOL, 1);
    long a = pooledRun(POOL, 10);
    ClaimResult held = claim(a, 1);
    long paused = waiterBehind();
    long stopping = waiterBehind();
    long deleted = waiterBehind();
    long ended = waiterBehind();
    long drained = waiterBehind();
    fixtures.setRunStatus(paused, "paused");
    fixtures.update("update runs set stop_requested_at = now() where id = ?", stopping);
    fixtures.update("delete from runs where id = ?", deleted);
    fixtures.update("update batches set status = 'stopped' where run_id = ?", drained);
    fixtures.update("update runs set status = 'failed' where id = ?", ended);
    complete(a, held.batches());

    ClaimResult again = claim(a, 1);

    assertThat(again.held()).isFalse();
    assertThat(again.batches()).hasSize(1);
  }

  /** A run of the pool that waits in line, its claim refused while another run holds the slot. */
  private long waiterBehind() {
    long runId = pooledRun(POOL, 3);
    assertThat(claim(runId, 1).held()).isTrue();
    return runId;
  }

  @Test
  void aChainGivesItsPoolSlotUpWhenARunOfAnotherRunWaits() {
    pool(POOL, 1);
    long a = pooledRun(POOL, 10);
    long b = pooledRun(POOL, 10);
    Optional<BatchStart> chained = batches.claimNext(a, 1, 1, "chain-a", 30_000);
    assertThat(chained).isPresent();
    assertThat(chained.get().pool()).isEqualTo(POOL);
    assertThat(claim(b, 1).held()).isTrue();

    ChainStep step =
        batches.completeAndClaimNext(a, chained.get().number(), "chain-a", 0, 1, 30_000, 1);

    assertThat(step.next()).isNull();
    assertThat(claim(b, 1).batches()).hasSize(1);
  }

  @Test
  void aChainGoesOnInItsPoolSlotWhileNobodyWaits() {
    pool(POOL, 1);
    long a = pooledRun(POOL, 10);
    pooledRun(POOL, 10); // never asks: not in line
    BatchStart chained = batches.claimNext(a, 1, 1, "chain-a", 30_000).orElseThrow();

    ChainStep step = batches.completeAndClaimNext(a, chained.number(), "chain-a", 0, 1, 30_000, 1);

    assertThat(step.next()).isNotNull();
    assertThat(step.next().pool()).isEqualTo(POOL);
    assertThat(batches.claimNext(a, 2, 2, "chain-a2", 30_000)).isEmpty();
  }

  @Test
  void concurrentClaimsOfManyRunsNeverExceedThePoolOrACap() throws Exception {
    pool(POOL, 3);
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      long runId = pooledRun(POOL, 40);
      fixtures.update("update runs set max_parallel_batches = 2 where id = ?", runId);
      runs.add(runId);
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (int round = 0; round < 10; round++) {
        CyclicBarrier start = new CyclicBarrier(8);
        List<Future<Integer>> claims = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          long runId = runs.get(i % runs.size());
          int lane = i / runs.size() + 1;
          boolean chain = i % 2 == 1;
          Callable<Integer> work =
              () -> {
                start.await(10, TimeUnit.SECONDS);
                return chain
                    ? batches.claimNext(runId, 100 + lane, lane, "c" + lane, 30_000).isPresent()
                        ? 1
                        : 0
                    : claim(runId, 2).batches().size();
              };
          claims.add(pool.submit(work));
        }
        for (Future<Integer> claim : claims) {
          claim.get(30, TimeUnit.SECONDS);
        }
        assertThat(poolHolders(POOL)).isLessThanOrEqualTo(3);
        for (long runId : runs) {
          assertThat(
                  ((Number) fixtures.row("select dripline_slot_holders(?) as n", runId).get("n"))
                      .intValue())
              .isLessThanOrEqualTo(2);
        }
        // Free every slot for the next round.
        fixtures.update(
            "update batches set status = 'completed' where status in ('enqueued', 'running')"
                + " and run_id = any (?)",
            (Object) runs.toArray(new Long[0]));
      }
      assertThat(
              ((Number)
                      fixtures
                          .row(
                              "select count(*) as n from batches where status = 'completed'"
                                  + " and run_id = any (?)",
                              (Object) runs.toArray(new Long[0]))
                          .get("n"))
                  .intValue())
          .isGreaterThanOrEqualTo(10);
    } finally {
      pool.shutdownNow();
    }
  }
}
