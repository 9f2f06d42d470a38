package dev.dripline.examples;

import static dev.dripline.examples.TestData.context;
import static dev.dripline.examples.TestData.query;
import static dev.dripline.examples.TestData.uniqueRunId;
import static dev.dripline.examples.TestData.uniqueTag;
import static dev.dripline.examples.TestData.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.Database;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(startApplication = false, transactional = false)
class SleepBackfillIT {
  @Inject Database database;
  @Inject DataSource dataSource;
  final SleepBackfill sleep = new SleepBackfill();
  ConcurrencyWitness witness;

  @BeforeEach
  void witness() {
    witness = new ConcurrencyWitness(database.dataSource());
  }

  private BackfillContext items(long runId, long items, Object... more) {
    List<Object> keyValues = new ArrayList<>(List.of("items", items));
    keyValues.addAll(List.of(more));
    return context(database, runId, SleepBackfill.NAME, keyValues.toArray());
  }

  @Test
  void declaresItsOptions() throws Exception {
    assertThat(sleep.name()).isEqualTo("example.sleep");
    assertThat(sleep.maxParallelBatches()).isNull();
    assertThat(sleep.options())
        .anySatisfy(
            o -> {
              assertThat(o.name()).isEqualTo("items");
              assertThat(o.required()).isTrue();
              assertThat(o.type()).isEqualTo(OptionType.INTEGER);
              assertThat(o.min()).isZero();
            })
        .anySatisfy(
            o -> {
              assertThat(o.name()).isEqualTo("sleepMs");
              assertThat(o.defaultValue()).isEqualTo(0L);
            })
        .anySatisfy(
            o -> {
              assertThat(o.name()).isEqualTo("sleepMsPerKey");
              assertThat(o.defaultValue()).isEqualTo(0L);
              assertThat(o.min()).isZero();
            })
        .anySatisfy(o -> assertThat(o.name()).isEqualTo("faultTag"));
  }

  @Test
  void aBatchSleepsSleepMsPerKeyForEachOfItsKeysBesideSleepMs() throws Exception {
    BackfillContext context = items(uniqueRunId(), 100, "sleepMs", 30L, "sleepMsPerKey", 20L);

    long started = System.nanoTime();
    sleep.processBatch(context, new KeyRange(11, 20));
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

    // A lower bound only: Thread.sleep never returns early; how much later it returns is the
    // machine's.
    assertThat(tookMillis).isGreaterThanOrEqualTo(30 + 10 * 20);
  }

  @Test
  void keysAfterPagesThroughOneToItems() throws Exception {
    BackfillContext context = items(uniqueRunId(), 25);

    assertThat(sleep.keysAfter(context, null, 10))
        .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
    assertThat(sleep.keysAfter(context, 10L, 10))
        .containsExactly(11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L);
    assertThat(sleep.keysAfter(context, 20L, 10)).containsExactly(21L, 22L, 23L, 24L, 25L);
    assertThat(sleep.keysAfter(context, 25L, 10)).isEmpty();
    assertThat(sleep.keysAfter(context, 99L, 10)).isEmpty();
  }

  @Test
  void keysAfterMaterialisesNoMoreThanLimitOfAHugeScope() throws Exception {
    BackfillContext context = items(uniqueRunId(), Long.MAX_VALUE);

    assertThat(sleep.keysAfter(context, null, 3)).containsExactly(1L, 2L, 3L);
    assertThat(sleep.keysAfter(context, Long.MAX_VALUE - 2, 10))
        .containsExactly(Long.MAX_VALUE - 1, Long.MAX_VALUE);
    assertThat(sleep.keysAfter(context, Long.MAX_VALUE, 10)).isEmpty();
  }

  @Test
  void zeroItemsHaveNoKeys() throws Exception {
    assertThat(sleep.keysAfter(items(uniqueRunId(), 0), null, 10)).isEmpty();
  }

  @Test
  void concurrentBatchesAreWitnessedAndCurrentReturnsToZero() throws Exception {
    long runId = uniqueRunId();
    int threads = 5;
    BackfillContext context = items(runId, 100, "sleepMs", 1_500L);
    warmPool(threads);
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        long first = i * 10L + 1;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  sleep.processBatch(context, new KeyRange(first, first + 9));
                  return null;
                }));
      }
      for (Future<?> result : results) {
        result.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, threads));
    assertThat(query(database, "select 1 from example_executing where run_id = ?", runId))
        .isEmpty();
  }

  /**
   * Opens {@code size} pooled connections at once so the batches do not wait for the pool to create
   * them one by one, which would make them overlap less than the test intends.
   */
  private void warmPool(int size) throws SQLException {
    List<Connection> connections = new ArrayList<>();
    try {
      for (int i = 0; i < size; i++) {
        connections.add(dataSource.getConnection());
      }
    } finally {
      for (Connection connection : connections) {
        connection.close();
      }
    }
  }

  @Test
  void sequentialBatchesAreNeverSeenTogether() throws Exception {
    long runId = uniqueRunId();
    BackfillContext context = items(runId, 30, "sleepMs", 10L);

    for (long first = 1; first <= 30; first += 10) {
      sleep.processBatch(context, new KeyRange(first, first + 9));
    }

    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
  }

  @Test
  void batchesOfRunsOfAPoolAreWitnessedPerPool() throws Exception {
    String pool = uniqueTag("sleep-it-pool");
    long first = uniqueRunId();
    long second = uniqueRunId();
    try {
      ConcurrencyWitness.Execution a = witness.enter(first, 1, pool);
      ConcurrencyWitness.Execution b = witness.enter(second, 1, pool);
      ConcurrencyWitness.Reading both = witness.readPool(pool);
      a.close();
      sleep.processBatch(
          new BackfillContext(
              first,
              SleepBackfill.NAME,
              new BackfillOptions(Map.of("items", 4L, "sleepMs", 1L)),
              pool,
              database.dataSource()),
          new KeyRange(1, 2));
      ConcurrencyWitness.Reading afterBatch = witness.readPool(pool);
      b.close();

      assertThat(both).isEqualTo(new ConcurrencyWitness.Reading(2, 2));
      assertThat(afterBatch).isEqualTo(new ConcurrencyWitness.Reading(1, 2));
      assertThat(witness.readPool(pool)).isEqualTo(new ConcurrencyWitness.Reading(0, 2));
      // Each run's own witness counts its batch too.
      assertThat(witness.read(first)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
    } finally {
      update(database, "delete from example_pool_concurrency where pool = ?", pool);
    }
  }

  @Test
  void witnessCountsAnExecutionOnlyWhileItIsOpen() throws Exception {
    long runId = uniqueRunId();

    ConcurrencyWitness.Execution a = witness.enter(runId, 1);
    ConcurrencyWitness.Execution b = witness.enter(runId, 2);
    ConcurrencyWitness.Reading both = witness.read(runId);
    b.close();
    ConcurrencyWitness.Reading one = witness.read(runId);
    a.close();
    a.close(); // closing twice is harmless

    assertThat(both).isEqualTo(new ConcurrencyWitness.Reading(2, 2));
    assertThat(one).isEqualTo(new ConcurrencyWitness.Reading(1, 2));
    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 2));
  }

  @Test
  void rowsOfDeadSessionsAreNotCounted() throws Exception {
    long runId = uniqueRunId();
    // What a worker killed with kill -9 mid-batch leaves behind: a row whose session is gone.
    update(
        database,
        "insert into example_executing (run_id, batch_number, backend_pid) values (?, 7, 999999)",
        runId);

    sleep.processBatch(items(runId, 10), new KeyRange(1, 10));

    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
    assertThat(query(database, "select 1 from example_executing where run_id = ?", runId))
        .isEmpty();
  }

  @Test
  void aBatchWhoseSessionDiesStopsBeingCounted() throws Exception {
    long runId = uniqueRunId();
    ConcurrencyWitness.Execution orphan = witness.enter(runId, 1);
    long pid =
        TestData.queryLong(
            database, "select backend_pid from example_executing where run_id = ?", runId);

    // As when the worker holding it is killed with kill -9: its session ends, its row stays.
    assertThat(query(database, "select pg_terminate_backend(?::int, 10000)", pid))
        .containsExactly(List.of(true));
    sleep.processBatch(items(runId, 10), new KeyRange(11, 20));

    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
    assertThatThrownBy(orphan::close).isInstanceOf(SQLException.class);
    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
  }

  @Test
  void anInterruptedBatchFailsAndLeavesNothingCounted() throws Exception {
    long runId = uniqueRunId();
    BackfillContext context = items(runId, 10, "sleepMs", 60_000L);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<?> batch =
          pool.submit(
              () -> {
                sleep.processBatch(context, new KeyRange(1, 10));
                return null;
              });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (witness.read(runId).current() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(witness.read(runId).current()).isEqualTo(1);

      batch.cancel(true);
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      pool.shutdownNow();
    }

    assertThat(witness.read(runId)).isEqualTo(new ConcurrencyWitness.Reading(0, 1));
  }

  @Test
  void batchFaultFailsOnlyBatchesHoldingTheKeyUntilDeleted() throws Exception {
    String tag = uniqueTag("sleep-fault");
    BackfillContext context = items(uniqueRunId(), 30, "faultTag", tag);
    update(database, "insert into example_faults (tag, phase, key) values (?, 'batch', 15)", tag);
    try {
      assertThatCode(() -> sleep.processBatch(context, new KeyRange(1, 10)))
          .doesNotThrowAnyException();
      assertThatThrownBy(() -> sleep.processBatch(context, new KeyRange(11, 20)))
          .isInstanceOf(InjectedFaultException.class)
          .isNotInstanceOf(PermanentBackfillException.class);
      assertThatCode(() -> sleep.processBatch(context, new KeyRange(16, 20)))
          .doesNotThrowAnyException();
      // A run without the tag is not affected.
      assertThatCode(() -> sleep.processBatch(items(uniqueRunId(), 30), new KeyRange(11, 20)))
          .doesNotThrowAnyException();
    } finally {
      update(database, "delete from example_faults where tag = ?", tag);
    }

    assertThatCode(() -> sleep.processBatch(context, new KeyRange(11, 20)))
        .doesNotThrowAnyException();
  }

  @Test
  void planFaultFailsKeysAfterUntilDeleted() throws Exception {
    String tag = uniqueTag("sleep-plan");
    BackfillContext context = items(uniqueRunId(), 30, "faultTag", tag);
    update(database, "insert into example_faults (tag, phase) values (?, 'plan')", tag);
    try {
      assertThatThrownBy(() -> sleep.keysAfter(context, null, 10))
          .isInstanceOf(InjectedFaultException.class)
          .isNotInstanceOf(PermanentBackfillException.class);
    } finally {
      update(database, "delete from example_faults where tag = ?", tag);
    }

    assertThat(sleep.keysAfter(context, null, 10)).hasSize(10);
  }
}
