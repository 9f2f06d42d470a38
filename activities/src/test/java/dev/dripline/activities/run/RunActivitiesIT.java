package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.catalogue.CataloguePublisher;
import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.runtime.run.BatchRequeue;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.audit.AuditEventRepository;
import dev.dripline.store.counters.BatchOutcomeCounterRepository;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchStart;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.throttle.BrakeRepository;
import dev.dripline.store.throttle.CheckRowRepository;
import dev.dripline.workflows.run.BatchFailure;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.CapRecord;
import dev.dripline.workflows.run.ClaimRequest;
import dev.dripline.workflows.run.ClaimResult;
import dev.dripline.workflows.run.FinishRequest;
import dev.dripline.workflows.run.FinishResult;
import dev.dripline.workflows.run.RequeueRequest;
import dev.dripline.workflows.run.RequeueResult;
import dev.dripline.workflows.run.RunRef;
import dev.dripline.workflows.run.RunSettings;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.StartResult;
import dev.dripline.workflows.run.StatusChange;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class RunActivitiesIT {
  @Inject RunActivitiesImpl activities;
  @Inject RunFixtures fixtures;
  @Inject CataloguePublisher catalogue;
  @Inject RunRepository runs;
  @Inject BatchRepository batches;
  @Inject BatchRequeue requeues;
  @Inject DataTransactions transactions;
  @Inject EngineConfig engine;
  @Inject BatchMetrics metrics;
  @Inject BatchOutcomeCounterRepository counters;
  @Inject ThrottleChecks checks;
  @Inject AuditEventRepository audit;
  @Inject BrakeRepository brake;
  @Inject CheckRowRepository checkRows;

  @AfterEach
  void cleanUp() {
    brake.release();
    checkRows.deleteByName(HOLDING_CHECK);
    fixtures.deleteCreated();
  }

  private static final String HOLDING_CHECK = "run-activities-it-lag";

  @Test
  void loadRunReadsSettingsWithDefinitionAndEngineCaps() {
    catalogue.publish();
    long runId = fixtures.runningRun(100, 10);
    fixtures.update("update runs set requested_max_parallel_batches = 3 where id = ?", runId);

    RunSettings settings = activities.loadRun(new RunRef(runId));

    assertThat(settings.found()).isTrue();
    assertThat(settings.backfill()).isEqualTo(KeysBackfill.NAME);
    assertThat(settings.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(settings.batchSize()).isEqualTo(10);
    assertThat(settings.requestedCap()).isEqualTo(3);
    assertThat(settings.definitionCap()).isEqualTo(7);
    assertThat(settings.engineSafetyCap()).isEqualTo(200);
    assertThat(settings.effectiveCap()).isEqualTo(3);
    assertThat(settings.startedAt()).isNotNull();
    assertThat(settings.batchPolicy().maxAttempts()).isEqualTo(3);
    // dripline.engine.ended-run-retry-window, DRIPLINE_ENDED_RUN_RETRY_WINDOW: 7d by default.
    assertThat(settings.endedRunRetryWindowMillis()).isEqualTo(Duration.ofDays(7).toMillis());
  }

  @Test
  void loadRunRecordsACapLoweredByARedeployOfTheDefinition() {
    catalogue.publish();
    long runId = runRecordedWithCap8(8);
    // A redeploy publishes the definition with a lower cap.
    fixtures.update(
        "update backfill_definitions set max_parallel_batches = 4 where name = ?",
        KeysBackfill.NAME);
    try {
      RunSettings settings = activities.loadRun(new RunRef(runId));

      assertThat(settings.effectiveCap()).isEqualTo(4);
      assertRecordedCap(runId, 4);
    } finally {
      catalogue.publish();
    }
  }

  @Test
  void loadRunRecordsACapLoweredByTheEngineSafetyCapOfTheWorkerRunningIt() {
    catalogue.publish();
    long runId = runRecordedWithCap8(null);
    // A redeploy gives the worker that loads the run a lower safety cap.
    RunActivitiesImpl redeployed =
        new RunActivitiesImpl(
            runs,
            batches,
            requeues,
            transactions,
            withSafetyCap(engine, 3),
            metrics,
            counters,
            checks,
            audit);
    try {
      RunSettings settings = redeployed.loadRun(new RunRef(runId));

      assertThat(settings.effectiveCap()).isEqualTo(3);
      assertRecordedCap(runId, 3);
    } finally {
      catalogue.publish();
    }
  }

  @Test
  void loadRunLeavesACapThatAlreadyBindsAsRecorded() {
    catalogue.publish();
    long runId = fixtures.runningRun(100, 10);
    fixtures.update("update runs set requested_max_parallel_batches = 5 where id = ?", runId);
    Object updatedAt = fixtures.runRow(runId).get("updated_at");

    activities.loadRun(new RunRef(runId));

    assertThat(fixtures.runRow(runId))
        .containsEntry("max_parallel_batches", 5)
        .containsEntry("updated_at", updatedAt);
  }

  @Test
  void aLoadedCapNeverOverwritesACapChangeRecordedSinceTheLoad() {
    long runId = fixtures.runningRun(100, 10);
    activities.recordCap(new CapRecord(runId, 2, 2));

    // Computed by a load that read requested cap 8, before the change was recorded.
    int written = runs.recordLoadedCap(runId, 8, 4);

    assertThat(written).isZero();
    assertThat(fixtures.runRow(runId))
        .containsEntry("requested_max_parallel_batches", 2)
        .containsEntry("max_parallel_batches", 2);
  }

  /**
   * A running run the API recorded with cap 8 under a definition of cap 8 (test.keys declares 7:
   * the caller publishes the catalogue again afterwards), with {@code requested} as its requested
   * cap.
   */
  private long runRecordedWithCap8(Integer requested) {
    long runId = fixtures.runningRun(200, 10);
    fixtures.batches(runId, 20, 10, "pending");
    fixtures.update(
        "update runs set requested_max_parallel_batches = ?, max_parallel_batches = 8"
            + " where id = ?",
        requested,
        runId);
    fixtures.update(
        "update backfill_definitions set max_parallel_batches = 8 where name = ?",
        KeysBackfill.NAME);
    return runId;
  }

  /**
   * The run's record holds {@code cap}: what GET /api/runs/{id} shows ({@link RunRepository#find})
   * and what a chain's claim of its next batch reads ({@link BatchRepository#claimNext}), which
   * takes nothing in a lane above it.
   */
  private void assertRecordedCap(long runId, int cap) {
    assertThat(fixtures.runRow(runId)).containsEntry("max_parallel_batches", cap);
    assertThat(runs.find(runId).orElseThrow().maxParallelBatches()).isEqualTo(cap);
    assertThat(chainClaim(runId, cap + 1)).isEmpty();
    assertThat(chainClaim(runId, cap)).isPresent();
  }

  private Optional<BatchStart> chainClaim(long runId, int lane) {
    return transactions.inTransaction(
        connection -> {
          runs.lockRow(runId);
          return batches.claimNext(runId, 1000 + lane, lane, "chain of lane " + lane, 30_000);
        });
  }

  private static EngineConfig withSafetyCap(EngineConfig e, int safetyCap) {
    return new EngineConfig(
        safetyCap,
        e.batchMaxAttempts(),
        e.batchTimeout(),
        e.batchHeartbeatTimeout(),
        e.batchRetryInitialInterval(),
        e.batchRetryMaxInterval(),
        e.planPageBatches(),
        e.maxBatchesPerExecution(),
        e.batchChainTime(),
        e.batchChainPlanWait(),
        e.databaseOutageWait(),
        e.endedRunRetryWindow(),
        e.throughputSampleInterval(),
        e.unknownBackfillWait());
  }

  @Test
  void loadRunReportsAStopRecordedForTheRun() {
    catalogue.publish();
    long runId = fixtures.runningRun(100, 10);
    assertThat(activities.loadRun(new RunRef(runId)).stopRequested()).isFalse();

    activities.recordStopRequested(new RunRef(runId));

    assertThat(activities.loadRun(new RunRef(runId)).stopRequested()).isTrue();
  }

  @Test
  void loadRunOfMissingRunIsNotFound() {
    assertThat(activities.loadRun(new RunRef(-42)).found()).isFalse();
  }

  @Test
  void markRunningMovesPendingOnceRepeatsItsAnswerAndReportsOtherwise() {
    long runId = fixtures.run("pending", "{\"items\":1}", 10, null);

    StartResult first = activities.markRunning(new RunRef(runId));
    StartResult again = activities.markRunning(new RunRef(runId));

    assertThat(first.started()).isTrue();
    assertThat(first.startedAt()).isNotNull();
    // A repeat (re-run after a lost workflow task) gets the first call's answer.
    assertThat(again).isEqualTo(first);

    long stopped = fixtures.run("stopped", "{\"items\":1}", 10, null);
    StartResult ofStopped = activities.markRunning(new RunRef(stopped));
    assertThat(ofStopped.started()).isFalse();
    assertThat(ofStopped.status()).isEqualTo(RunStatus.STOPPED);

    StartResult ofMissing = activities.markRunning(new RunRef(-42));
    assertThat(ofMissing.started()).isFalse();
    assertThat(ofMissing.status()).isNull();
  }

  /**
   * A stop the API recorded for a pending run while Temporal could not be reached (R2) holds when
   * the run's start time comes: the run ends stopped, never having started.
   */
  @Test
  void markRunningEndsStoppedAPendingRunWhoseStopIsRecorded() {
    long runId = fixtures.run("pending", "{\"items\":1}", 10, null);
    fixtures.update("update runs set stop_requested_at = now() where id = ?", runId);

    StartResult start = activities.markRunning(new RunRef(runId));
    StartResult again = activities.markRunning(new RunRef(runId));

    assertThat(start).isEqualTo(new StartResult(false, RunStatus.STOPPED, null));
    assertThat(again).isEqualTo(start);
    Map<String, Object> row = fixtures.runRow(runId);
    assertThat(row.get("status")).isEqualTo("stopped");
    assertThat(row.get("started_at")).isNull();
    assertThat(row.get("finished_at")).isNotNull();
  }

  @Test
  void claimTakesLowestNumbersFirstAndRepeatsByToken() {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "completed");

    ClaimResult first = activities.claimPending(new ClaimRequest(runId, 1001, 3));
    ClaimResult repeat = activities.claimPending(new ClaimRequest(runId, 1001, 3));
    ClaimResult next = activities.claimPending(new ClaimRequest(runId, 1002, 2));

    assertThat(first.batches()).extracting(BatchRef::number).containsExactly(2, 3, 4);
    assertThat(first.batches().get(0)).isEqualTo(new BatchRef(2, 11, 20, 10));
    assertThat(repeat).isEqualTo(first);
    assertThat(next.batches()).extracting(BatchRef::number).containsExactly(5, 6);
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly(
            "completed",
            "enqueued",
            "enqueued",
            "enqueued",
            "enqueued",
            "enqueued",
            "pending",
            "pending",
            "pending",
            "pending");
  }

  @Test
  void aBrakedClaimTakesNothingSaysWhyAndBooksTheTimeHeld() {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    brake.holdIfReleased("drill", "operator");

    ClaimResult held = activities.claimPending(new ClaimRequest(runId, 1, 3));
    ClaimResult stillHeld = activities.claimPending(new ClaimRequest(runId, 2, 3));

    assertThat(held.batches()).isEmpty();
    assertThat(held.held()).isTrue();
    assertThat(held.holds()).containsExactly("brake");
    assertThat(held.lookAgainMillis()).isEqualTo(RunActivitiesImpl.BRAKE_LOOK_MILLIS);
    assertThat(held.heldSinceMillis()).isNotNull();
    assertThat(stillHeld.heldSinceMillis())
        .as("the hold opened once")
        .isEqualTo(held.heldSinceMillis());
    assertThat(fixtures.batchStatuses(runId)).containsOnly("pending");
    fixtures.update(
        "update runs set held_since = held_since - interval '5 seconds' where id = ?", runId);

    brake.release();
    ClaimResult free = activities.claimPending(new ClaimRequest(runId, 3, 3));

    assertThat(free.held()).isFalse();
    assertThat(free.batches()).extracting(BatchRef::number).containsExactly(1, 2, 3);
    assertThat(free.heldSinceMillis()).isNull();
    assertThat(free.throttledMillis()).isGreaterThanOrEqualTo(5_000);
    assertThat(fixtures.runRow(runId)).containsEntry("held_since", null);
    assertThat(((Number) fixtures.runRow(runId).get("throttled_millis")).longValue())
        .isEqualTo(free.throttledMillis());
  }

  @Test
  void aCheckHoldsOnlyTheBackfillsItAppliesTo() {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    Instant since = Instant.parse("2026-01-01T00:00:00Z");
    holdingLag(since, "some-other-backfill");

    ClaimResult elsewhere = activities.claimPending(new ClaimRequest(runId, 1, 1));
    assertThat(elsewhere.held()).isFalse();
    assertThat(elsewhere.batches()).hasSize(1);

    holdingLag(since, "some-other-backfill", (String) fixtures.runRow(runId).get("backfill"));
    ClaimResult here = activities.claimPending(new ClaimRequest(runId, 2, 1));
    assertThat(here.holds()).containsExactly(HOLDING_CHECK);
    assertThat(here.batches()).isEmpty();

    checkRows.record(
        HOLDING_CHECK,
        "replica-lag",
        3.0,
        30,
        24,
        "clear",
        false,
        since,
        since,
        null,
        new String[0]);
    assertThat(activities.claimPending(new ClaimRequest(runId, 3, 1)).batches()).hasSize(1);
  }

  @Test
  void aRepeatedClaimIsAnsweredAsTheFirstEvenWhenAHoldBeganSince() {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    ClaimResult first = activities.claimPending(new ClaimRequest(runId, 7, 2));
    brake.holdIfReleased("drill", "operator");

    ClaimResult repeat = activities.claimPending(new ClaimRequest(runId, 7, 2));

    assertThat(repeat.batches()).isEqualTo(first.batches()).hasSize(2);
    assertThat(repeat.held()).isFalse();
  }

  @Test
  void aChainTakesNoNextBatchWhileTheBrakeIsOn() {
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    brake.holdIfReleased("drill", "operator");

    Optional<BatchStart> braked =
        transactions.inTransaction(
            connection -> {
              runs.lockRow(runId);
              return batches.claimNext(runId, 1, 1, "it-holder", 30_000);
            });
    brake.release();
    Optional<BatchStart> free =
        transactions.inTransaction(
            connection -> {
              runs.lockRow(runId);
              return batches.claimNext(runId, 1, 1, "it-holder", 30_000);
            });

    assertThat(braked).isEmpty();
    assertThat(free).isPresent();
  }

  @Test
  void aClaimTakesNoMoreThanTheCapLessTheBatchesHoldingASlot() {
    // Cap 5 (the fixture's); two batches hold a slot that this execution knows nothing of — left
    // by an execution whose history was lost, or claimed by a racing attempt.
    long runId = fixtures.runningRun(100, 10);
    fixtures.batches(runId, 10, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "running");
    fixtures.setBatchStatus(runId, 2, "enqueued");

    ClaimResult claim = activities.claimPending(new ClaimRequest(runId, 1, 5));
    ClaimResult more = activities.claimPending(new ClaimRequest(runId, 2, 5));

    assertThat(claim.batches()).extracting(BatchRef::number).containsExactly(3, 4, 5);
    assertThat(more.batches()).isEmpty();
    assertThat(holders(runId)).isEqualTo(5);
  }

  @Test
  void twoAttemptsOfOneClaimAtOnceTakeOneSetOfSlots() throws Exception {
    // A local activity's start-to-close timeout starts the next attempt without interrupting the
    // first: both run the claim with the same token at the same time.
    for (int round = 0; round < 10; round++) {
      long runId = fixtures.runningRun(200, 10);
      fixtures.batches(runId, 20, 10, "pending");
      CyclicBarrier together = new CyclicBarrier(2);
      Callable<ClaimResult> claim =
          () -> {
            together.await();
            return activities.claimPending(new ClaimRequest(runId, 7, 3));
          };
      ExecutorService two = Executors.newFixedThreadPool(2);
      try {
        Future<ClaimResult> first = two.submit(claim);
        Future<ClaimResult> second = two.submit(claim);

        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo(first.get(30, TimeUnit.SECONDS));
        assertThat(holders(runId)).as("round %d", round).isEqualTo(3);
      } finally {
        two.shutdownNow();
      }
    }
  }

  @Test
  void aClaimNeverTakesMoreThanACapLoweredByARedeploy() {
    catalogue.publish(); // test.keys declares maxParallelBatches 7
    long runId = fixtures.runningRun(200, 10);
    fixtures.batches(runId, 20, 10, "pending");
    fixtures.update("update runs set max_parallel_batches = 50 where id = ?", runId);

    ClaimResult claim = activities.claimPending(new ClaimRequest(runId, 1, 20));

    assertThat(claim.batches()).hasSize(7);
  }

  private long holders(long runId) {
    return (Long)
        fixtures
            .row(
                "select count(*) as n from batches where run_id = ?"
                    + " and status in ('enqueued', 'running')",
                runId)
            .get("n");
  }

  @Test
  void tokenOfFinishedBatchesDoesNotBlockANewClaim() {
    long runId = fixtures.runningRun(40, 10);
    fixtures.batches(runId, 4, 10, "pending");
    fixtures.update(
        "update batches set status = 'completed', claim_token = 0"
            + " where run_id = ? and number <= 2",
        runId);

    // A revived run's new execution counts tokens from 0 again.
    ClaimResult claim = activities.claimPending(new ClaimRequest(runId, 0, 5));

    assertThat(claim.batches()).extracting(BatchRef::number).containsExactly(3, 4);
  }

  @Test
  void claimWithNothingPendingIsEmpty() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.batches(runId, 1, 10, "completed");

    assertThat(activities.claimPending(new ClaimRequest(runId, 7, 5)).batches()).isEmpty();
  }

  @Test
  void recordBatchFailureFailsOnlyASlotHolder() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 3, 10, "running");
    fixtures.setBatchStatus(runId, 2, "completed");
    String longError = "x".repeat(10_000);

    activities.recordBatchFailure(new BatchFailure(runId, 1, longError));
    activities.recordBatchFailure(new BatchFailure(runId, 2, "late"));

    List<java.util.Map<String, Object>> rows = fixtures.batchRows(runId);
    assertThat(rows.get(0).get("status")).isEqualTo("failed");
    assertThat(((String) rows.get(0).get("error")).length()).isEqualTo(ErrorText.MAX_LENGTH);
    assertThat(rows.get(0).get("finished_at")).isNotNull();
    assertThat(rows.get(1).get("status")).isEqualTo("completed");
    assertThat(rows.get(1).get("error")).isNull();
  }

  @Test
  void recordBatchFailureReleasesTheBatchItsChainStillHeld() {
    // Batch 1's activity completed it, chained batch 2, then failed for good while holding batch 3:
    // nothing would ever finish batch 3.
    long runId = fixtures.runningRun(50, 10);
    fixtures.batches(runId, 5, 10, "pending");
    fixtures.update(
        "update batches set status = 'completed', chain_head = case when number = 2 then 1 end"
            + " where run_id = ? and number in (1, 2)",
        runId);
    fixtures.update(
        // Its attempts at batch 3 died with their workers again and again: they spend nothing.
        "update batches set status = 'running', chain_head = 1, attempts = 7"
            + " where run_id = ? and number = 3",
        runId);
    fixtures.update(
        "update batches set status = 'running', chain_head = 4, attempts = 4, failed_attempts = 3"
            + " where run_id = ? and number = 5",
        runId);

    activities.recordBatchFailure(new BatchFailure(runId, 1, "heartbeat timeout"));
    // Batch 4 completed; the batch its chain held has failed all its attempts (3 by default).
    fixtures.setBatchStatus(runId, 4, "completed");
    activities.recordBatchFailure(new BatchFailure(runId, 4, "heartbeat timeout"));

    List<java.util.Map<String, Object>> rows = fixtures.batchRows(runId);
    assertThat(rows.get(0)).containsEntry("status", "completed");
    assertThat(rows.get(1)).containsEntry("status", "completed");
    assertThat(rows.get(2))
        .containsEntry("status", "pending")
        .containsEntry("chain_head", null)
        .containsEntry("error", "heartbeat timeout");
    assertThat(rows.get(2).get("finished_at")).isNull();
    assertThat(rows.get(4)).containsEntry("status", "failed").containsEntry("chain_head", null);
    assertThat(rows.get(4).get("finished_at")).isNotNull();
  }

  @Test
  void requeueMovesFailedBatchesBackAndReopensEndedRun() {
    long runId = fixtures.run("failed", "{\"items\":30}", 10, null);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    fixtures.update(
        "update batches set status = 'failed', error = 'boom', failed_attempts = 3"
            + " where run_id = ? and number = 2",
        runId);

    RequeueResult result = activities.requeue(new RequeueRequest(runId, null));
    RequeueResult again = activities.requeue(new RequeueRequest(runId, null));

    assertThat(result).isEqualTo(new RequeueResult(1, RunStatus.RUNNING));
    assertThat(again.requeued()).isZero();
    assertThat(fixtures.batchStatuses(runId)).containsExactly("completed", "pending", "completed");
    assertThat(fixtures.batchRows(runId).get(1))
        .as("a re-queued batch has its attempts again")
        .containsEntry("error", null)
        .containsEntry("failed_attempts", 0);
    assertThat(fixtures.runRow(runId).get("status")).isEqualTo("running");
  }

  /**
   * A retry's re-queue whose workflow task failed after it committed (worker killed) runs again on
   * replay, with the same token: it answers what it did — not "nothing to re-queue".
   */
  @Test
  void aRequeueRepeatedWithItsTokenAnswersWhatItDid() {
    long runId = fixtures.run("running", "{\"items\":30}", 10, null);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    fixtures.update(
        "update batches set status = 'failed', error = 'boom' where run_id = ? and number > 1",
        runId);

    RequeueResult first = activities.requeue(new RequeueRequest(runId, "execution-a/0"));
    RequeueResult replayed = activities.requeue(new RequeueRequest(runId, "execution-a/0"));
    RequeueResult next = activities.requeue(new RequeueRequest(runId, "execution-a/1"));

    assertThat(first).isEqualTo(new RequeueResult(2, RunStatus.RUNNING));
    assertThat(replayed).isEqualTo(first);
    assertThat(next.requeued()).as("a later retry finds nothing left").isZero();
    assertThat(fixtures.batchStatuses(runId)).containsExactly("completed", "pending", "pending");
  }

  /**
   * A run stopped before it started and then retried runs: it is recorded started, and its pause is
   * recorded as any running run's is. It was re-opened without a start time, so the pause, which
   * fits a started run's record only, was not recorded: under concurrent control (F5) its workflow
   * paused while the record said running, and nothing resumed it.
   */
  @Test
  void aRunStoppedBeforeItStartedAndRetriedIsStartedAndItsPauseIsRecorded() {
    long runId = fixtures.run("pending", "{\"items\":30}", 10, null);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "pending");
    assertThat(activities.finish(new FinishRequest(runId, true, null)).status())
        .isEqualTo(RunStatus.STOPPED);

    RequeueResult retried = activities.requeue(new RequeueRequest(runId, null));
    activities.recordStatus(new StatusChange(runId, RunStatus.PAUSED));

    assertThat(retried).isEqualTo(new RequeueResult(3, RunStatus.RUNNING));
    assertThat(fixtures.runRow(runId).get("started_at")).isNotNull();
    assertThat(fixtures.runRow(runId).get("status")).isEqualTo("paused");
  }

  @Test
  void requeueOfARunBeingStoppedRequeuesNothing() {
    long runId = fixtures.run("running", "{\"items\":30}", 10, null);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    fixtures.update(
        "update batches set status = 'failed', error = 'boom' where run_id = ? and number = 2",
        runId);
    activities.recordStopRequested(new RunRef(runId));

    RequeueResult result = activities.requeue(new RequeueRequest(runId, null));

    assertThat(result).isEqualTo(new RequeueResult(0, RunStatus.RUNNING));
    assertThat(fixtures.batchStatuses(runId)).containsExactly("completed", "failed", "completed");
  }

  @Test
  void requeueOfMissingRunRequeuesNothing() {
    assertThat(activities.requeue(new RequeueRequest(-42, null)))
        .isEqualTo(new RequeueResult(0, null));
  }

  @Test
  void recordStatusSwitchesOnlyBetweenRunningAndPaused() {
    long runId = fixtures.runningRun(10, 10);
    long stopped = fixtures.run("stopped", "{\"items\":1}", 10, null);

    activities.recordStatus(new StatusChange(runId, RunStatus.PAUSED));
    activities.recordStatus(new StatusChange(stopped, RunStatus.RUNNING));

    assertThat(fixtures.runRow(runId).get("status")).isEqualTo("paused");
    assertThat(fixtures.runRow(stopped).get("status")).isEqualTo("stopped");
    activities.recordStatus(new StatusChange(runId, RunStatus.RUNNING));
    assertThat(fixtures.runRow(runId).get("status")).isEqualTo("running");
  }

  @Test
  void recordCapUpdatesActiveRunsOnly() {
    long runId = fixtures.runningRun(10, 10);
    long completed = fixtures.run("completed", "{\"items\":1}", 10, null);

    activities.recordCap(new CapRecord(runId, 9, 7));
    activities.recordCap(new CapRecord(completed, 9, 7));

    assertThat(fixtures.runRow(runId))
        .containsEntry("requested_max_parallel_batches", 9)
        .containsEntry("max_parallel_batches", 7);
    assertThat(fixtures.runRow(completed)).containsEntry("max_parallel_batches", 5);
  }

  @Test
  void recoverSlotsReturnsSlotHoldersToPending() {
    long runId = fixtures.runningRun(40, 10);
    fixtures.batches(runId, 4, 10, "completed");
    fixtures.setBatchStatus(runId, 2, "enqueued");
    fixtures.setBatchStatus(runId, 3, "running");

    int recovered = activities.recoverSlots(new RunRef(runId));

    assertThat(recovered).isEqualTo(2);
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("completed", "pending", "pending", "completed");
    assertThat(activities.claimPending(new ClaimRequest(runId, 5, 10)).batches())
        .extracting(BatchRef::number)
        .containsExactly(2, 3);
  }

  @Test
  void finishCompletesWhenEverythingCompleted() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    // Their keys, as completions count them: in two shards.
    fixtures.update(
        "update run_key_counts k set processed_keys = v.keys, completed_batches = v.n"
            + " from (values (1, 20, 2), (3, 10, 1)) v (shard, keys, n)"
            + " where k.run_id = ? and k.shard = v.shard",
        runId);

    FinishResult result = activities.finish(new FinishRequest(runId, false, null));
    FinishResult again = activities.finish(new FinishRequest(runId, false, "ignored"));

    assertThat(result.finished()).isTrue();
    assertThat(result.status()).isEqualTo(RunStatus.COMPLETED);
    assertThat(result.finishedAt()).isNotNull();
    assertThat(result.processedKeys()).isEqualTo(30L);
    assertThat(again).isEqualTo(result);
    assertThat(fixtures.runRow(runId))
        .containsEntry("status", "completed")
        .containsEntry("total_keys", 30L)
        .containsEntry("error", null);
  }

  @Test
  void finishFailsWhenABatchFailed() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    fixtures.setBatchStatus(runId, 3, "failed");

    FinishResult result = activities.finish(new FinishRequest(runId, false, null));

    assertThat(result.status()).isEqualTo(RunStatus.FAILED);
    assertThat(fixtures.runRow(runId)).containsEntry("error", "1 batch failed");
  }

  @Test
  void finishFailsWithTheGivenRunError() {
    long runId = fixtures.runningRun(30, 10);

    FinishResult result =
        activities.finish(new FinishRequest(runId, false, "planning failed: bad scope"));

    assertThat(result.status()).isEqualTo(RunStatus.FAILED);
    assertThat(fixtures.runRow(runId))
        .containsEntry("error", "planning failed: bad scope")
        .containsEntry("total_keys", null);
  }

  @Test
  void finishDoesNotEndARunWithWorkLeft() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.markPlanned(runId, 30);
    fixtures.batches(runId, 3, 10, "completed");
    fixtures.setBatchStatus(runId, 2, "pending");

    FinishResult pending = activities.finish(new FinishRequest(runId, false, null));
    fixtures.setBatchStatus(runId, 2, "running");
    FinishResult holding = activities.finish(new FinishRequest(runId, false, null));

    assertThat(pending.finished()).isFalse();
    assertThat(holding.finished()).isFalse();
    assertThat(fixtures.runRow(runId)).containsEntry("status", "running");
  }

  @Test
  void finishDoesNotCompleteARunWhosePlanningIsUnfinished() {
    long runId = fixtures.runningRun(30, 10);
    fixtures.batches(runId, 1, 10, "completed");

    assertThat(activities.finish(new FinishRequest(runId, false, null)).finished()).isFalse();
  }

  @Test
  void finishStoppingStopsPendingBatchesButWaitsForSlotHolders() {
    long runId = fixtures.runningRun(40, 10);
    fixtures.batches(runId, 4, 10, "pending");
    fixtures.setBatchStatus(runId, 1, "completed");
    fixtures.setBatchStatus(runId, 2, "running");

    FinishResult whileRunning = activities.finish(new FinishRequest(runId, true, null));
    assertThat(whileRunning.finished()).isFalse();
    assertThat(fixtures.batchStatuses(runId))
        .containsExactly("completed", "running", "stopped", "stopped");

    fixtures.setBatchStatus(runId, 2, "completed");
    FinishResult done = activities.finish(new FinishRequest(runId, true, null));

    assertThat(done.finished()).isTrue();
    assertThat(done.status()).isEqualTo(RunStatus.STOPPED);
    assertThat(fixtures.runRow(runId)).containsEntry("status", "stopped");
  }

  @Test
  void finishStoppingAPendingRunStopsIt() {
    long runId = fixtures.run("pending", "{\"items\":1}", 10, null);

    FinishResult result = activities.finish(new FinishRequest(runId, true, null));

    assertThat(result.finished()).isTrue();
    assertThat(result.status()).isEqualTo(RunStatus.STOPPED);
  }

  @Test
  void finishOfDeletedRunIsFinishedWithoutStatus() {
    assertThat(activities.finish(new FinishRequest(-42, false, null)))
        .isEqualTo(new FinishResult(true, null, null));
  }

  /** Records {@link #HOLDING_CHECK} over its threshold, holding the runs of {@code backfills}. */
  private void holdingLag(Instant since, String... backfills) {
    checkRows.record(
        HOLDING_CHECK, "replica-lag", 42.0, 30, 24, "over", true, since, since, null, backfills);
  }
}
