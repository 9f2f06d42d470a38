package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A paced run ({@code niceRatio}, {@link LaneRest}) through {@link BatchExecution} on real
 * PostgreSQL: its lane rests after each batch, and a pause, stop or hold that comes during a rest
 * starts no further batch. Asserted on the times PostgreSQL recorded, never on how fast anything
 * ran.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class PacedLaneIT {
  private static final long CHAIN_MILLIS = 120_000;

  /**
   * What a batch's duration as PostgreSQL records it ({@code started_at} to {@code finished_at})
   * may exceed the duration the lane measured by: the round trip that answered its start.
   */
  private static final double SLACK_MILLIS = 100;

  /** Generous bounds for what a busy machine may delay; none is a measured figure. */
  private static final Duration AT_MOST = Duration.ofSeconds(60);

  /**
   * How long a rest cut short by the run's state may take to end: it looks every second; the bound
   * is generous, and far below the rests it cuts short.
   */
  private static final Duration REST_ENDS_WITHIN = Duration.ofSeconds(30);

  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;

  @AfterEach
  void cleanUp() {
    keysBackfill.processSleepMillis(0);
    keysBackfill.whileProcessing(null);
    fixtures.deleteCreated();
  }

  /** Batches 1..count of 10 keys at {@code niceRatio}; batch 1 enqueued, the rest pending. */
  private long pacedRun(int count, double niceRatio) {
    long runId = fixtures.run("running", "{\"items\":" + count * 10 + "}", 10, null);
    fixtures.update("update runs set nice_ratio = ? where id = ?", niceRatio, runId);
    fixtures.batches(runId, count, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "enqueued");
    return runId;
  }

  private static BatchWork chain(long runId, long chainMillis) {
    return new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10), 1, chainMillis);
  }

  /** Each batch's recorded start and finish, in milliseconds, in the order they started. */
  private List<Map<String, Object>> times(long runId) {
    return fixtures.rows(
        "select number, cast(extract(epoch from started_at) * 1000 as float8) as started,"
            + " cast(extract(epoch from finished_at) * 1000 as float8) as finished"
            + " from batches where run_id = ? order by started_at",
        runId);
  }

  /** Between one batch's finish and the next start (one lane) there is ratio × its duration. */
  private void assertRested(long runId, double niceRatio) {
    List<Map<String, Object>> times = times(runId);
    for (int i = 1; i < times.size(); i++) {
      double started = (double) times.get(i - 1).get("started");
      double finished = (double) times.get(i - 1).get("finished");
      double next = (double) times.get(i).get("started");
      assertThat(next - finished)
          .as("rest after batch %s (times %s)", times.get(i - 1).get("number"), times)
          .isGreaterThanOrEqualTo(niceRatio * (finished - started) - SLACK_MILLIS);
    }
  }

  @Test
  void aPacedChainRestsRatioTimesEachBatchsDurationBeforeItsNextBatch() {
    long runId = pacedRun(4, 1);
    keysBackfill.processSleepMillis(300);

    BatchResult result = execution.process(chain(runId, CHAIN_MILLIS));

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 3, 30, null, null, false));
    assertThat(fixtures.batchStatuses(runId)).containsOnly("completed");
    assertRested(runId, 1);
    for (Map<String, Object> batch : fixtures.batchRows(runId)) {
      assertThat(batch).containsEntry("attempts", 1);
    }
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 40L);
  }

  @Test
  void aPacedHeadBatchRestsBeforeItsActivityReturns() {
    long runId = pacedRun(1, 2);
    keysBackfill.processSleepMillis(300);

    long before = System.nanoTime();
    BatchResult result = execution.process(chain(runId, 0));
    long took = System.nanoTime() - before;

    assertThat(result).isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10));
    Map<String, Object> batch = times(runId).get(0);
    double ran = (double) batch.get("finished") - (double) batch.get("started");
    // The attempt took the batch, then twice its duration to rest.
    assertThat(TimeUnit.NANOSECONDS.toMillis(took)).isGreaterThanOrEqualTo((long) (3 * ran) - 300);
  }

  @Test
  void aPauseDuringARestStartsNoFurtherBatch() {
    assertARestEndsWithoutAnotherBatch(runId -> fixtures.setRunStatus(runId, "paused"));
  }

  @Test
  void aStopDuringARestStartsNoFurtherBatch() {
    assertARestEndsWithoutAnotherBatch(
        runId -> fixtures.update("update runs set stop_requested_at = now() where id = ?", runId));
  }

  @Test
  void aHoldDuringARestStartsNoFurtherBatch() {
    String check = "paced-lane-it-" + UUID.randomUUID();
    try {
      assertARestEndsWithoutAnotherBatch(
          runId ->
              fixtures.update(
                  "insert into throttle_checks (name, kind, value, threshold, resume_below, state,"
                      + " holding, since, evaluated_at, applies_to) values (?, 'sql', 12, 10, 8,"
                      + " 'over', true, now(), now(), array[?])",
                  check,
                  KeysBackfill.NAME));
    } finally {
      fixtures.update("delete from throttle_checks where name = ?", check);
    }
  }

  /**
   * A chain whose lane rests 100 times its batch's duration (over 100 s, far longer than the {@link
   * #REST_ENDS_WITHIN} it is given) after batch 1 is {@code interrupted} meanwhile: its rest ends
   * and it returns without taking batch 2, which stays pending.
   */
  private void assertARestEndsWithoutAnotherBatch(LongConsumer interrupted) {
    long runId = pacedRun(3, 100);
    keysBackfill.processSleepMillis(1_000);

    CompletableFuture<BatchResult> chain =
        CompletableFuture.supplyAsync(() -> execution.process(chain(runId, CHAIN_MILLIS)));
    await()
        .atMost(AT_MOST)
        .until(() -> fixtures.batchStatuses(runId).get(0).equals("completed") || chain.isDone());
    interrupted.accept(runId);

    BatchResult result = chain.orTimeout(REST_ENDS_WITHIN.toSeconds(), TimeUnit.SECONDS).join();

    assertThat(result)
        .isEqualTo(new BatchResult(BatchOutcome.COMPLETED, 10, 0, 0, null, null, false));
    assertThat(fixtures.batchStatuses(runId)).containsExactly("completed", "pending", "pending");
    assertThat(fixtures.batchRows(runId).get(1)).containsEntry("attempts", 0);
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 10L);
  }
}
