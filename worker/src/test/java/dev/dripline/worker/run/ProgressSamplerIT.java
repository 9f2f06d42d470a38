package dev.dripline.worker.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.ProgressSampleRepository;
import io.micronaut.context.ApplicationContext;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The workers' sampling of run progress ({@link ProgressSampler}, {@link
 * ProgressSampleRepository#sample}) against real PostgreSQL: one sample per running run per
 * interval, whichever worker and however many passes, and none of a run that is not running.
 */
class ProgressSamplerIT {
  private static final Duration INTERVAL = Duration.ofSeconds(10);

  /** An interval's start, far from the clock of any other test's sampler. */
  private static final Instant BIN = Instant.parse("2031-03-04T05:06:10Z");

  private ApplicationContext context;
  private Database database;
  private ProgressSampleRepository samples;
  private final List<Long> runs = new ArrayList<>();

  @BeforeEach
  void setUp() {
    context =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.address", "127.0.0.1:1",
                "dripline.worker.enabled", "false",
                "dripline.throttle.evaluate", "false"),
            "test");
    database = context.getBean(Database.class);
    samples = context.getBean(ProgressSampleRepository.class);
  }

  @AfterEach
  void tearDown() {
    for (long id : runs) {
      sql("delete from runs where id = ?", id);
    }
    context.close();
  }

  @Test
  void twoWorkersWriteOneSamplePerRunningRunPerInterval() {
    long running = run("running");
    long other = run("running");
    long paused = run("paused");
    long pending = run("pending");
    long completed = run("completed");
    for (long id : List.of(running, other, paused, pending, completed)) {
      counters(id, 500, 5);
    }
    ProgressSampler first = sampler(BIN.plusSeconds(1));
    ProgressSampler second = sampler(BIN.plusMillis(9_999));

    assertThat(first.sampleNow()).isGreaterThanOrEqualTo(2);
    counters(running, 900, 9);
    second.sampleNow();
    first.sampleNow();

    assertThat(samplesOf(running)).containsExactly(BIN + " 500 5");
    assertThat(samplesOf(other)).containsExactly(BIN + " 500 5");
    assertThat(samplesOf(paused)).isEmpty();
    assertThat(samplesOf(pending)).isEmpty();
    assertThat(samplesOf(completed)).isEmpty();

    sampler(BIN.plus(INTERVAL)).sampleNow();

    assertThat(samplesOf(running)).containsExactly(BIN + " 500 5", BIN.plus(INTERVAL) + " 900 9");
  }

  /**
   * A worker whose sample of an interval is not committed yet makes another's wait for it, then
   * write nothing: still one sample per run.
   */
  @Test
  void aConcurrentSampleOfTheSameIntervalWaitsAndWritesNothing() throws Exception {
    long running = run("running");
    counters(running, 70, 7);
    DataTransactions transactions = context.getBean(DataTransactions.class);
    CountDownLatch sampled = new CountDownLatch(1);
    CountDownLatch commit = new CountDownLatch(1);
    CompletableFuture<Integer> first =
        CompletableFuture.supplyAsync(
            () ->
                transactions.inTransaction(
                    connection -> {
                      int written = sampler(BIN.plusSeconds(2)).sampleNow();
                      sampled.countDown();
                      awaitLatch(commit);
                      return written;
                    }));
    assertThat(sampled.await(2, TimeUnit.MINUTES)).isTrue();
    counters(running, 80, 8);
    CompletableFuture<Integer> second =
        CompletableFuture.supplyAsync(() -> sampler(BIN.plusSeconds(3)).sampleNow());
    awaitWaitingInsert();
    commit.countDown();

    assertThat(first.get(2, TimeUnit.MINUTES)).isGreaterThanOrEqualTo(1);
    second.get(2, TimeUnit.MINUTES);
    assertThat(samplesOf(running)).containsExactly(BIN + " 70 7");
  }

  @Test
  void aRunsSamplesGoWithIt() {
    long running = run("running");
    sampler(BIN).sampleNow();
    assertThat(samplesOf(running)).hasSize(1);

    sql("delete from runs where id = ?", running);

    assertThat(count("select count(*) from run_progress_samples where run_id = ?", running))
        .isZero();
  }

  @Test
  void eachPassIsScheduledForTheStartOfTheNextInterval() {
    assertThat(sampler(BIN.plusMillis(3_500)).delayToNextInterval()).isEqualTo(6_500);
    assertThat(sampler(BIN).delayToNextInterval()).isEqualTo(10_000);
    assertThat(ProgressSampleRepository.intervalStart(BIN.plusMillis(9_999), INTERVAL))
        .isEqualTo(BIN);
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      assertThat(latch.await(2, TimeUnit.MINUTES)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private ProgressSampler sampler(Instant now) {
    return new ProgressSampler(samples, INTERVAL, Clock.fixed(now, ZoneOffset.UTC));
  }

  private long run(String status) {
    long id =
        count(
            "insert into runs (backfill, options, options_key, batch_size, max_parallel_batches,"
                + " status, started_at) values ('sampler-it', '{}'::jsonb, ?, 10, 5, ?,"
                + " case when ? = 'pending' then null else now() end) returning id",
            UUID.randomUUID().toString(),
            status,
            status);
    runs.add(id);
    return id;
  }

  /** Sets the run's counters: all in one shard, the others zero. */
  private void counters(long runId, long keys, long batches) {
    sql(
        "update run_key_counts set processed_keys = case when shard = 3 then ? else 0 end,"
            + " completed_batches = case when shard = 3 then ? else 0 end where run_id = ?",
        keys,
        batches,
        runId);
  }

  private List<String> samplesOf(long runId) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select sampled_at, processed_keys, completed_batches from run_progress_samples"
                      + " where run_id = ? order by sampled_at")) {
            select.setLong(1, runId);
            List<String> rows = new ArrayList<>();
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                rows.add(
                    rs.getTimestamp(1).toInstant() + " " + rs.getLong(2) + " " + rs.getLong(3));
              }
            }
            return rows;
          }
        });
  }

  /** Waits (a minute at most) until an insert into the samples waits for a lock. */
  private void awaitWaitingInsert() throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (count(
            "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
                + " and query like '%insert into run_progress_samples%'")
        == 0) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no sample insert waited for the uncommitted one in a minute");
      }
      Thread.sleep(20);
    }
  }

  private long count(String sql, Object... args) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
              statement.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = statement.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  private void sql(String sql, Object... args) {
    database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
              statement.setObject(i + 1, args[i]);
            }
            return statement.executeUpdate();
          }
        });
  }
}
