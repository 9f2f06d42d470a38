package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.ChainStep;
import dev.dripline.workflows.run.ClaimRequest;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pick of a run's next pending batch (chained completions, a chain's claim, the workflow's
 * claim) starts at the run's pick cursor (migration V27: {@code run_pick_cursors}), so it reads a
 * bounded number of index entries however many of the run's batches left pending since the last
 * vacuum; re-queued and released batches move the cursor back and are picked again.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class PendingPickIT {
  private static final long LEASE_MILLIS = 60_000;

  /**
   * Index entries of {@code batches} one claim may read: those of the batches taken since the
   * cursor last moved (it moves once a take is 16 past it), the advance's own look, and the lookups
   * of the batches it completes and takes.
   */
  private static final long BOUND = 64;

  @Inject RunActivitiesImpl activities;
  @Inject BatchRepository batches;
  @Inject RunFixtures fixtures;
  @Inject Database database;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  /**
   * A transaction that keeps a snapshot open (a report, a dump: any long query on the database), so
   * that no entry the takes left behind is known dead to every transaction and none is skipped:
   * each is read by a pick that passes it.
   */
  private AutoCloseable holdSnapshot() throws InterruptedException {
    CountDownLatch taken = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Boolean> holder =
        CompletableFuture.supplyAsync(
            () ->
                database.inTransaction(
                    connection -> {
                      try (Statement statement = connection.createStatement()) {
                        statement.execute("set transaction isolation level repeatable read");
                        statement.executeQuery("select count(*) from runs").close();
                      }
                      taken.countDown();
                      return awaitQuietly(release);
                    }));
    assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue();
    return () -> {
      release.countDown();
      holder.get(30, TimeUnit.SECONDS);
    };
  }

  @Test
  @SuppressWarnings("try") // the snapshot is held for the block
  void theNextPendingBatchIsPickedFromAReadOfBoundedLengthWhateverTheBatchesTaken()
      throws Exception {
    try (AutoCloseable snapshot = holdSnapshot()) {
      // Statistics of batches that know other runs but not this one, as a new run's batches are
      // until autovacuum's next analyze, whatever the test database held before.
      for (int i = 0; i < 8; i++) {
        fixtures.batches(fixtures.runningRun(1_000, 10), 100, 10, "completed");
      }
      fixtures.update("analyze batches");
      long runId = fixtures.runningRun(5_000, 10);
      fixtures.batches(runId, 500, 10, "pending");
      fixtures.update("update runs set max_parallel_batches = 4 where id = ?", runId);
      // One chain takes and completes 400 batches, one at a time.
      int number = batches.claimNext(runId, 1, 1, "h1", LEASE_MILLIS).orElseThrow().number();
      for (int i = 1; i < 400; i++) {
        ChainStep step =
            batches.completeAndClaimNext(
                runId, number, "h1", ShardedCounters.shardOf(number), 1, LEASE_MILLIS, 1);
        assertThat(step.number()).isEqualTo(number + 1);
        number = step.number();
      }
      int last = number;

      String chained =
          "select number from dripline_complete_and_claim_next("
              + runId
              + ", "
              + last
              + ", 'h1', "
              + ShardedCounters.shardOf(last)
              + ", 1, 60000, 1)";
      String claim = "select number from dripline_claim_batches(" + runId + ", 7, 1, 100)";
      long[] read = new long[4];
      String[] chainedReads = new String[1];
      database.inTransaction(
          connection -> {
            long before = entriesRead(connection);
            String byIndexBefore = entriesReadByIndex(connection);
            read[0] = query(connection, chained);
            read[2] = entriesRead(connection) - before;
            chainedReads[0] = byIndexBefore + " -> " + entriesReadByIndex(connection);
            return null;
          });
      // What a failure needs to be told apart: where the cursor was, and which index was read.
      String[] claimReads = new String[1];
      long cursorBeforeClaim = cursor(runId);
      database.inTransaction(
          connection -> {
            long before = entriesRead(connection);
            String byIndexBefore = entriesReadByIndex(connection);
            read[1] = query(connection, claim);
            read[3] = entriesRead(connection) - before;
            claimReads[0] = byIndexBefore + " -> " + entriesReadByIndex(connection);
            return null;
          });

      assertThat(read[0]).isEqualTo(last + 1);
      assertThat(read[1]).isEqualTo(last + 2);
      assertThat(read[2])
          .as(
              "entries the chained completion of batch %d read (by index: %s)",
              last, chainedReads[0])
          .isLessThanOrEqualTo(BOUND);
      assertThat(read[3])
          .as(
              "entries the workflow's claim of batch %d read (cursor at %d before it; by index: %s)",
              last + 2, cursorBeforeClaim, claimReads[0])
          .isLessThanOrEqualTo(BOUND);
      assertThat(batches.countPending(runId, 1_000))
          .as("pending, counted from the cursor")
          .isEqualTo(98);
    }
  }

  @Test
  void batchesBackToPendingArePickedAgainFirst() {
    long runId = fixtures.runningRun(1_000, 10);
    fixtures.batches(runId, 100, 10, "pending");
    fixtures.update("update runs set max_parallel_batches = 4 where id = ?", runId);

    int number = batches.claimNext(runId, 1, 1, "h1", LEASE_MILLIS).orElseThrow().number();
    for (int i = 1; i < 60; i++) {
      number =
          batches
              .completeAndClaimNext(
                  runId, number, "h1", ShardedCounters.shardOf(number), 1, LEASE_MILLIS, 1)
              .number();
    }
    assertThat(number).isEqualTo(60);
    assertThat(cursor(runId)).as("the cursor moved on").isGreaterThan(16);

    // Batch 7 failed; the run's retry re-queues it: it is the next one picked.
    fixtures.update(
        "update batches set status = 'failed', error = 'boom' where run_id = ? and number = 7",
        runId);
    assertThat(batches.requeue(runId, List.of("failed"))).isEqualTo(1);
    assertThat(cursor(runId)).isLessThanOrEqualTo(7);
    assertThat(
            batches
                .completeAndClaimNext(
                    runId, number, "h1", ShardedCounters.shardOf(number), 1, LEASE_MILLIS, 1)
                .number())
        .isEqualTo(7);

    // The chain's batch 7 goes back to pending (its chain released it): the claim takes it.
    assertThat(batches.releaseHeldByChain(runId, 1, 0, "h1")).isEqualTo(1);
    List<Integer> claimed =
        activities.claimPending(new ClaimRequest(runId, 99, 2)).batches().stream()
            .map(b -> b.number())
            .toList();
    assertThat(claimed).containsExactly(7, 61);

    // A batch inserted below the cursor (an operator's, or a test's) is picked too.
    fixtures.update("delete from batches where run_id = ? and number = 3", runId);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " values (?, 3, dripline_bigint_key(21), dripline_bigint_key(30), 10, 'pending')",
        runId);
    assertThat(cursor(runId)).isLessThanOrEqualTo(3);
    assertThat(batches.claimNext(runId, 2, 2, "h2", LEASE_MILLIS).orElseThrow().number())
        .isEqualTo(3);
  }

  /**
   * Chains of one run, and releases that put their batches back to pending, at once from several
   * sessions: every batch is completed exactly once, none is missed.
   */
  @Test
  void concurrentChainsAndReleasesMissNoBatch() throws Exception {
    long runId = fixtures.runningRun(6_000, 10);
    fixtures.batches(runId, 600, 10, "pending");
    fixtures.update("update runs set max_parallel_batches = 6 where id = ?", runId);
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<Integer>> chains = new ArrayList<>();
      for (int lane = 1; lane <= 6; lane++) {
        int head = 10_000 + lane;
        int laneOf = lane;
        String holder = "chain-" + lane;
        chains.add(
            pool.submit(
                () -> {
                  int done = 0;
                  int round = 0;
                  while (true) {
                    var first = batches.claimNext(runId, head, laneOf, holder, LEASE_MILLIS);
                    if (first.isEmpty()) {
                      return done;
                    }
                    Integer number = first.get().number();
                    while (number != null) {
                      round++;
                      if (round % 23 == 0) {
                        // Gives its batch back (a fenced chain), to be picked again.
                        batches.releaseHeldByChain(runId, head, 0, holder);
                        break;
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
                  }
                }));
      }
      int completed = 0;
      for (Future<Integer> chain : chains) {
        completed += chain.get(180, TimeUnit.SECONDS);
      }
      assertThat(completed).isEqualTo(600);
    } finally {
      pool.shutdownNow();
    }
    assertThat(fixtures.batchStatuses(runId)).containsOnly("completed");
  }

  private static boolean awaitQuietly(CountDownLatch latch) {
    try {
      return latch.await(120, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private long cursor(long runId) {
    return ((Number)
            fixtures
                .row("select pending_from from run_pick_cursors where run_id = ?", runId)
                .get("pending_from"))
        .longValue();
  }

  private static int query(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery(sql)) {
      assertThat(row.next()).as(sql).isTrue();
      return row.getInt(1);
    }
  }

  /** Index entries of {@code batches} read so far in this transaction, by index. */
  private static String entriesReadByIndex(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery(
                "select string_agg(indexrelid::regclass || '=' ||"
                    + " pg_stat_get_xact_tuples_returned(indexrelid), ', ' order by indexrelid)"
                    + " from pg_index where indrelid = 'batches'::regclass")) {
      rows.next();
      return rows.getString(1);
    }
  }

  /**
   * Index entries of {@code batches} (any of its indexes: the planner may walk the primary key
   * instead of {@code batches_run_status_idx}) this session has read since it last flushed its
   * counts to the statistics, which it does only between transactions: the difference between two
   * reads in one transaction is that transaction's, and no other session's reads are among them.
   */
  private static long entriesRead(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet row =
            statement.executeQuery(
                "select sum(pg_stat_get_xact_tuples_returned(indexrelid)) from pg_index"
                    + " where indrelid = 'batches'::regclass")) {
      row.next();
      return row.getLong(1);
    }
  }
}
