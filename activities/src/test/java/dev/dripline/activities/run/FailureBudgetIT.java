package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.runtime.run.BatchRequeue;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.ClaimResult;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.StatusChange;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A run's failure budget (P6b) over real PostgreSQL: spent by failures, held, renewed. */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class FailureBudgetIT {
  @Inject RunActivitiesImpl activities;
  @Inject RunFixtures fixtures;
  @Inject BatchRequeue requeues;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  /** A running run of 100 batches with a budget of 10 % once 20 have finished. */
  private long budgetedRun() {
    long runId = fixtures.runningRun(1_000, 10);
    fixtures.update(
        "update runs set max_failed_batches_percent = 10, failure_budget_min_batches = 20"
            + " where id = ?",
        runId);
    fixtures.batches(runId, 100, 10, "pending");
    return runId;
  }

  /** Batches {@code from..to} completed, counted as the engine counts them. */
  private void completed(long runId, int from, int to) {
    fixtures.update(
        "update batches set status = 'completed' where run_id = ? and number between ? and ?",
        runId,
        from,
        to);
    fixtures.update(
        "insert into run_key_counts (run_id, shard, completed_batches) values (?, 0, ?)"
            + " on conflict (run_id, shard) do update"
            + " set completed_batches = run_key_counts.completed_batches + excluded.completed_batches",
        runId,
        (long) (to - from + 1));
  }

  /** Batch {@code number} failed for good, through the workflow's activity. */
  private void fails(long runId, int number) {
    fixtures.setBatchStatus(runId, number, "running");
    activities.recordBatchFailure(new BatchFailure(runId, number, "boom"));
  }

  private Object spentAt(long runId) {
    return fixtures.runRow(runId).get("failure_budget_spent_at");
  }

  @Test
  void failuresWithinTheBudgetLeaveTheRunClaiming() {
    long runId = budgetedRun();
    completed(runId, 1, 18);
    fails(runId, 19);
    fails(runId, 20); // 2 of 20 finished: 10 %, not beyond it

    assertThat(spentAt(runId)).isNull();
    assertThat(activities.claimPending(new ClaimRequest(runId, 1, 2)).batches()).hasSize(2);
  }

  @Test
  void aFailureBeyondTheBudgetHoldsTheRunsClaims() {
    long runId = budgetedRun();
    completed(runId, 1, 18);
    fails(runId, 19);
    fails(runId, 20);
    fails(runId, 21); // 3 of 21: beyond 10 %

    assertThat(spentAt(runId)).isNotNull();
    ClaimResult claim = activities.claimPending(new ClaimRequest(runId, 1, 2));
    assertThat(claim.held()).isTrue();
    assertThat(claim.holds()).containsExactly("failure-budget");
    assertThat(claim.batches()).isEmpty();
  }

  @Test
  void theBudgetAppliesOnlyOnceItsMinimumOfBatchesFinished() {
    long runId = budgetedRun();
    for (int number = 1; number <= 19; number++) {
      fails(runId, number); // 19 of 19 failed, but fewer than 20 finished
    }
    assertThat(spentAt(runId)).isNull();

    fails(runId, 20);

    assertThat(spentAt(runId)).isNotNull();
  }

  @Test
  void aRunWithoutABudgetIsNeverHeldByFailures() {
    long runId = fixtures.runningRun(1_000, 10);
    fixtures.batches(runId, 30, 10, "pending");
    for (int number = 1; number <= 25; number++) {
      fails(runId, number);
    }

    assertThat(spentAt(runId)).isNull();
    assertThat(activities.claimPending(new ClaimRequest(runId, 1, 1)).held()).isFalse();
  }

  @Test
  void aResumeRenewsASpentBudgetToCountOnlyLaterBatches() {
    long runId = budgetedRun();
    completed(runId, 1, 18);
    fails(runId, 19);
    fails(runId, 20);
    fails(runId, 21);
    assertThat(spentAt(runId)).isNotNull();

    activities.recordStatus(new StatusChange(runId, RunStatus.PAUSED));
    activities.recordStatus(new StatusChange(runId, RunStatus.RUNNING));

    assertThat(spentAt(runId)).isNull();
    assertThat(fixtures.runRow(runId))
        .containsEntry("failure_budget_failed_base", 3L)
        .containsEntry("failure_budget_finished_base", 21L);
    ClaimResult claim = activities.claimPending(new ClaimRequest(runId, 1, 1));
    assertThat(claim.held()).isFalse();
    assertThat(claim.batches()).extracting(BatchRef::number).containsExactly(22);
    // The budget counts afresh: 3 failures among the next 20 finished spend it again.
    completed(runId, 22, 38);
    fails(runId, 39);
    fails(runId, 40);
    assertThat(spentAt(runId)).isNull();
    fails(runId, 41);
    assertThat(spentAt(runId)).isNotNull();
  }

  @Test
  void aResumeOfABudgetNotSpentLeavesItsCountsAlone() {
    long runId = budgetedRun();
    completed(runId, 1, 10);
    fails(runId, 11);

    activities.recordStatus(new StatusChange(runId, RunStatus.PAUSED));
    activities.recordStatus(new StatusChange(runId, RunStatus.RUNNING));

    assertThat(fixtures.runRow(runId))
        .containsEntry("failure_budget_failed_base", 0L)
        .containsEntry("failure_budget_finished_base", 0L);
  }

  @Test
  void aRetryRenewsTheBudgetAsItRequeuesTheFailedBatches() {
    long runId = budgetedRun();
    completed(runId, 1, 18);
    fails(runId, 19);
    fails(runId, 20);
    fails(runId, 21);
    assertThat(spentAt(runId)).isNotNull();

    assertThat(requeues.requeue(runId).requeued()).isEqualTo(3);

    assertThat(spentAt(runId)).isNull();
    assertThat(fixtures.runRow(runId))
        .containsEntry("failure_budget_failed_base", 0L)
        .containsEntry("failure_budget_finished_base", 18L);
    assertThat(activities.claimPending(new ClaimRequest(runId, 1, 1)).held()).isFalse();
  }
}
