package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import io.micronaut.context.annotation.Property;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A chain that finds no pending batch while its run's planning goes on waits for planning to add
 * one ({@code dripline.engine.batch-chain-plan-wait}, long here so that a slow machine cannot end
 * the wait before the planner below writes).
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
@Property(name = "dripline.engine.batch-chain-plan-wait", value = "2m")
class ChainPlanWaitIT {
  @Inject BatchExecution execution;
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  @Test
  void waitsForPlanningToAddABatchRatherThanEndTheChain() throws Exception {
    // Only the head is planned so far, and planning goes on: batch 2 arrives once batch 1 is done.
    long runId = fixtures.run("running", "{\"items\":20}", 10, null);
    fixtures.batches(runId, 1, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "enqueued");
    CompletableFuture<Void> planner =
        CompletableFuture.runAsync(
            () -> {
              await()
                  .atMost(Duration.ofMinutes(1))
                  .until(() -> fixtures.batchStatuses(runId).equals(List.of("completed")));
              fixtures.update(
                  "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size,"
                      + " status) values (?, 2, dripline_bigint_key(11), dripline_bigint_key(20),"
                      + " 10, 'pending')",
                  runId);
              fixtures.markPlanned(runId, 20);
            });

    BatchResult result =
        execution.process(
            new BatchWork(runId, KeysBackfill.NAME, new BatchRef(1, 1, 10, 10), 1, 600_000));
    planner.get(1, TimeUnit.MINUTES);

    assertThat(result.chainedBatches()).isEqualTo(1);
    assertThat(fixtures.batchStatuses(runId)).containsOnly("completed");
  }
}
