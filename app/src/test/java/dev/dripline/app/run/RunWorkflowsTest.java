package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.RunStatus;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RunWorkflowsTest {

  @Test
  void summaryNamesBackfillBatchSizeCapAndKeyLimit() {
    RunRow run = run(1000L, Map.of("items", 5000));

    assertThat(RunWorkflows.summary(run))
        .isEqualTo("example.sleep · batch size 10 · cap 3 · 1,000 keys max");
  }

  @Test
  void summaryLeavesOutAnAbsentKeyLimit() {
    assertThat(RunWorkflows.summary(run(null, Map.of())))
        .isEqualTo("example.sleep · batch size 10 · cap 3");
  }

  @Test
  void summaryOfAPacedRunNamesItsNiceRatio() {
    assertThat(RunWorkflows.summary(run(null, Map.of(), 0.5)))
        .isEqualTo("example.sleep · batch size 10 · cap 3 · nice ratio 0.5");
  }

  @Test
  void summaryOfATunedRunNamesItsTargetAndBounds() {
    RunRow tuned = tuned(run(null, Map.of()), 2_000L, 10, 5_000);

    assertThat(RunWorkflows.summary(tuned))
        .isEqualTo(
            "example.sleep · batch size 10 · cap 3 · tuned to PT2S per batch, 10–5,000 keys");
  }

  private static RunRow tuned(RunRow run, long targetMillis, int min, int max) {
    return new RunRow(
        run.id(),
        run.backfill(),
        run.options(),
        run.batchSize(),
        run.maxRecords(),
        run.requestedMaxParallelBatches(),
        run.maxParallelBatches(),
        run.startAt(),
        run.createdBy(),
        run.status(),
        run.error(),
        run.workflowId(),
        run.totalKeys(),
        run.processedKeys(),
        run.createdAt(),
        run.updatedAt(),
        run.startedAt(),
        run.finishedAt(),
        run.stopping(),
        run.planDone(),
        run.heldSince(),
        run.throttledMillis(),
        targetMillis,
        min,
        max,
        run.batchSize(),
        run.failureBudget(),
        run.pool(),
        run.niceRatio());
  }

  @Test
  void detailsListTheOptions() {
    String details = RunWorkflows.details(run(null, new TreeMap<>(Map.of("items", 5, "tag", "x"))));

    assertThat(details).contains("- items = 5\n").contains("- tag = x\n").contains("Run 7");
  }

  private static RunRow run(Long maxRecords, Map<String, Object> options) {
    return run(maxRecords, options, 0);
  }

  private static RunRow run(Long maxRecords, Map<String, Object> options, double niceRatio) {
    return new RunRow(
        7,
        "example.sleep",
        options,
        10,
        maxRecords,
        null,
        3,
        null,
        "api",
        RunStatus.PENDING,
        null,
        "dripline-run-7",
        null,
        0,
        Instant.EPOCH,
        Instant.EPOCH,
        null,
        null,
        false,
        false,
        null,
        0,
        null,
        null,
        null,
        null,
        null,
        null,
        niceRatio);
  }
}
