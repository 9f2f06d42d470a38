package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.metrics.MetricsActivitiesImpl;
import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.metrics.SnapshotGauges;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.FinishRequest;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The run metrics of spec §5 as Prometheus scrapes them, on real PostgreSQL.
 *
 * <p>Each test gives its run a backfill name of its own ({@code runs.backfill}; the batch work
 * still names {@link KeysBackfill}, which executes it), so tests sharing the database cannot move
 * its counters.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class BatchMetricsIT {
  @Inject BatchExecution execution;
  @Inject RunActivitiesImpl runs;
  @Inject MetricsActivitiesImpl metrics;
  @Inject SnapshotGauges gauges;
  @Inject PrometheusMeterRegistry prometheus;
  @Inject RunFixtures fixtures;

  private final String backfill = "metrics-test-" + UUID.randomUUID();

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
    fixtures.update("delete from batch_outcome_counters where backfill = ?", backfill);
  }

  private long run(int batches, String status) {
    long runId = fixtures.runningRun((long) batches * 10, 10);
    fixtures.update("update runs set backfill = ? where id = ?", backfill, runId);
    fixtures.batches(runId, batches, 10, status);
    return runId;
  }

  private static BatchWork work(long runId, int number) {
    long start = (long) (number - 1) * 10 + 1;
    return new BatchWork(runId, KeysBackfill.NAME, new BatchRef(number, start, start + 9, 10));
  }

  /** The scrape after a fresh snapshot has been read, as every process would export it. */
  private List<String> scrape() {
    metrics.snapshot();
    gauges.refresh();
    return prometheus.scrape().lines().toList();
  }

  /** The value of the line starting with {@code series} (name and labels), if any. */
  private static Optional<Double> value(List<String> lines, String series) {
    return lines.stream()
        .filter(line -> line.startsWith(series + " "))
        .map(line -> Double.parseDouble(line.substring(series.length() + 1).trim()))
        .findFirst();
  }

  private String finished(String outcome) {
    return "dripline_batches_finished_total{backfill=\""
        + backfill
        + "\",outcome=\""
        + outcome
        + "\"}";
  }

  private String duration(String suffix, String le) {
    return "dripline_batch_duration_seconds_"
        + suffix
        + "{backfill=\""
        + backfill
        + "\""
        + (le == null ? "" : ",le=\"" + le + "\"")
        + "}";
  }

  @Test
  void completionCountsOnceAndRecordsTheTimeTheSlotWasHeld() {
    long runId = run(1, "enqueued");
    fixtures.update(
        "update batches set enqueued_at = now() - interval '2 seconds' where run_id = ?", runId);

    BatchResult first = execution.process(work(runId, 1));
    BatchResult repeat = execution.process(work(runId, 1));
    List<String> lines = scrape();

    assertThat(first.outcome()).isEqualTo(BatchOutcome.COMPLETED);
    assertThat(repeat.outcome()).isEqualTo(BatchOutcome.ALREADY_COMPLETED);
    assertThat(lines).contains("# TYPE dripline_batches_finished_total counter");
    assertThat(value(lines, finished("completed"))).contains(1.0);
    assertThat(value(lines, finished("failed"))).contains(0.0);
    assertThat(value(lines, finished("stopped"))).contains(0.0);
    assertThat(
            fixtures.row(
                "select sum(value)::bigint as value from batch_outcome_counters where backfill = ?",
                backfill))
        .containsEntry("value", 1L);
    assertThat(lines).contains("# TYPE dripline_batch_duration_seconds histogram");
    assertThat(value(lines, duration("count", null))).contains(1.0);
    assertThat(value(lines, duration("sum", null)))
        .hasValueSatisfying(s -> assertThat(s).isBetween(2.0, 60.0));
    assertThat(value(lines, duration("bucket", "1.0"))).contains(0.0);
    assertThat(value(lines, duration("bucket", "2.5"))).isPresent();
    assertThat(value(lines, duration("bucket", "3600.0"))).contains(1.0);
    assertThat(value(lines, duration("bucket", "+Inf"))).contains(1.0);
  }

  @Test
  void failureCountsOnlyWhenItsCompareAndSetRecordedIt() {
    long runId = run(3, "running");
    fixtures.update("update batches set enqueued_at = now() where run_id = ?", runId);
    fixtures.setBatchStatus(runId, 3, "completed");

    runs.recordBatchFailure(new BatchFailure(runId, 1, "boom"));
    runs.recordBatchFailure(new BatchFailure(runId, 1, "boom again"));
    runs.recordBatchFailure(new BatchFailure(runId, 3, "late"));
    List<String> lines = scrape();

    assertThat(value(lines, finished("failed"))).contains(1.0);
    assertThat(value(lines, finished("completed"))).contains(0.0);
    assertThat(value(lines, duration("count", null))).contains(1.0);
  }

  @Test
  void stopCountsThePendingBatchesItStoppedOnce() {
    long runId = run(4, "pending");
    fixtures.setBatchStatus(runId, 1, "running");

    runs.finish(new FinishRequest(runId, true, null));
    runs.finish(new FinishRequest(runId, true, null));
    List<String> lines = scrape();

    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("running", "stopped", "stopped", "stopped");
    assertThat(value(lines, finished("stopped"))).contains(3.0);
    // Stopped batches never held a slot: no slot time.
    assertThat(value(lines, duration("count", null))).isEmpty();
  }

  @Test
  void inflightCountsSlotHoldersPerBackfillWhileItHasActiveRuns() {
    long runId = run(5, "pending");
    fixtures.setBatchStatus(runId, 1, "enqueued");
    fixtures.setBatchStatus(runId, 2, "running");
    fixtures.setBatchStatus(runId, 3, "running");
    fixtures.setBatchStatus(runId, 4, "completed");
    String inflight = "dripline_batches_inflight{backfill=\"" + backfill + "\"}";

    List<String> holding = scrape();
    fixtures.update("update batches set status = 'pending' where run_id = ? and number < 4", runId);
    fixtures.setRunStatus(runId, "paused");
    List<String> paused = scrape();
    fixtures.update("update batches set status = 'stopped' where run_id = ?", runId);
    fixtures.setRunStatus(runId, "stopped");
    List<String> ended = scrape();

    assertThat(holding).contains("# TYPE dripline_batches_inflight gauge");
    assertThat(value(holding, inflight)).contains(3.0);
    assertThat(value(paused, inflight)).contains(0.0);
    assertThat(value(ended, inflight)).isEmpty();
    assertThat(String.join("\n", holding)).doesNotContain("run_id").doesNotContain("runId");
  }
}
