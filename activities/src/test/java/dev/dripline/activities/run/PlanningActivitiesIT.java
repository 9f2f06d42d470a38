package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.store.run.RecentBatches;
import dev.dripline.store.run.RunRepository;
import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.PlanPage;
import dev.dripline.workflows.run.PlanRequest;
import dev.dripline.workflows.run.PlanningActivities;
import io.micronaut.data.annotation.Query;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import jakarta.inject.Inject;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class PlanningActivitiesIT {
  @Inject RunFixtures fixtures;
  @Inject KeysBackfill keysBackfill;
  @Inject Database database;
  @Inject RunRepository runs;
  @Inject BatchRepository batchStore;
  @Inject DataTransactions transactions;
  @Inject BackfillRegistry registry;
  @Inject RunOptionsReader optionsReader;
  @Inject EngineConfig engine;
  @Inject HeartbeatTicker ticker;

  /**
   * Planning with a call's time no machine reaches: how long saving a page takes depends on the
   * machine, so only aCallPastItsTimePlansNoFurtherPage, with its own budget, is about the budget.
   */
  private PlanningActivitiesImpl planning;

  @BeforeEach
  void setUp() {
    planning =
        new PlanningActivitiesImpl(
            database,
            runs,
            batchStore,
            transactions,
            registry,
            optionsReader,
            engine,
            ticker,
            Duration.ofHours(1));
  }

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  /** Plans until done, returning the pages; fails if planning does not converge. */
  private List<PlanPage> planAll(long runId, int maxBatches) {
    List<PlanPage> pages = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      PlanPage page = planning.planNextPage(new PlanRequest(runId, maxBatches));
      pages.add(page);
      if (page.done()) {
        return pages;
      }
    }
    throw new AssertionError("planning did not finish");
  }

  /** Asserts batches are numbered 1..n and cover keys 1..total exactly, in order. */
  private void assertCoversExactly(long runId, long total, int batchSize) {
    List<Map<String, Object>> batches = fixtures.batchRows(runId);
    long expectedStart = 1;
    for (int i = 0; i < batches.size(); i++) {
      Map<String, Object> batch = batches.get(i);
      long start = (Long) batch.get("start_key");
      long end = (Long) batch.get("end_key");
      int size = (Integer) batch.get("size");
      assertThat(batch.get("number")).isEqualTo(i + 1);
      assertThat(start).isEqualTo(expectedStart);
      assertThat(end - start + 1).isEqualTo(size);
      assertThat(size).isBetween(1, batchSize);
      if (i < batches.size() - 1) {
        assertThat(size).isEqualTo(batchSize);
      }
      assertThat(batch.get("status")).isEqualTo("pending");
      expectedStart = end + 1;
    }
    assertThat(expectedStart - 1).isEqualTo(total);
  }

  @Test
  void plansTheWholeScopeInPagesCoveringEveryKeyOnce() {
    long runId = fixtures.runningRun(95, 10);

    List<PlanPage> pages = planAll(runId, 3);

    assertThat(pages).extracting(PlanPage::batchesCreated).containsExactly(3, 3, 3, 1);
    assertThat(pages.get(pages.size() - 1).totalKeys()).isEqualTo(95L);
    assertCoversExactly(runId, 95, 10);
    assertThat(fixtures.runRow(runId))
        .containsEntry("plan_done", true)
        .containsEntry("total_keys", 95L)
        .containsEntry("planned_keys", 95L)
        .containsEntry("next_batch_number", 11);
  }

  /**
   * K2: the release before this one, serving beside it during a rolling upgrade, plans pages too,
   * writing the keys both as bytes and as bigints, and reads the bigint cursor first when it is
   * set. This release plans on from where that one left off, and clears the bigint cursor when it
   * moves the cursor, so that the release before reads the bytes this one wrote.
   */
  @Test
  void plansOnFromWhereTheReleaseBeforeLeftOffAndClearsTheBigintCursor() {
    long runId = fixtures.runningRun(60, 10);
    planning.planNextPage(new PlanRequest(runId, 2));
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, start_key, end_key,"
            + " size, status) select ?, n, dripline_bigint_key(n * 10 - 9),"
            + " dripline_bigint_key(n * 10), n * 10 - 9, n * 10, 10, 'pending'"
            + " from generate_series(3, 4) n",
        runId);
    fixtures.update(
        "update runs set plan_cursor = 40, plan_cursor_key = dripline_bigint_key(40),"
            + " next_batch_number = 5, planned_keys = 40 where id = ?",
        runId);

    assertThat(planning.planNextPage(new PlanRequest(runId, 1)))
        .isEqualTo(new PlanPage(1, false, null));
    assertThat(fixtures.row("select plan_cursor from runs where id = ?", runId).get("plan_cursor"))
        .isNull();
    assertThat(fixtures.runRow(runId)).containsEntry("plan_cursor", 50L);
    assertThat(
            fixtures.row(
                "select count(*) as bigints from batches where run_id = ? and number > 4"
                    + " and (start_key is not null or end_key is not null)",
                runId))
        .containsEntry("bigints", 0L);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 10));

    assertThat(page).isEqualTo(new PlanPage(1, true, 60L));
    assertCoversExactly(runId, 60, 10);
  }

  /**
   * A page whose save loses its connection (its backend terminated, as a PostgreSQL restart does)
   * is an outage: the call waits for PostgreSQL and plans the page again from the persisted cursor.
   * The failed transaction's rollback fails too ("Connection is closed", which alone tells no
   * outage); the call must still see the statement's own failure.
   */
  @Test
  void aPageWhoseConnectionIsLostIsPlannedAgainAfterTheOutage() {
    long runId = fixtures.runningRun(25, 10);
    AtomicInteger terminated = new AtomicInteger();
    RunRepository losingItsConnectionOnce =
        (RunRepository)
            Proxy.newProxyInstance(
                RunRepository.class.getClassLoader(),
                new Class<?>[] {RunRepository.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("advancePlan") && terminated.get() == 0) {
                    int pid =
                        transactions.inTransaction(
                            connection -> {
                              try (var select =
                                      connection.prepareStatement("select pg_backend_pid()");
                                  var rs = select.executeQuery()) {
                                rs.next();
                                return rs.getInt(1);
                              }
                            });
                    database.withConnection(
                        connection -> {
                          try (var kill =
                              connection.prepareStatement("select pg_terminate_backend(?, 5000)")) {
                            kill.setInt(1, pid);
                            kill.execute();
                          }
                          return null;
                        });
                    terminated.incrementAndGet();
                  }
                  try {
                    return method.invoke(runs, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    PlanningActivitiesImpl losing =
        new PlanningActivitiesImpl(
            database,
            losingItsConnectionOnce,
            batchStore,
            transactions,
            registry,
            optionsReader,
            engine,
            ticker,
            Duration.ofHours(1));
    PlanPage page = losing.planNextPage(new PlanRequest(runId, 100));

    assertThat(terminated.get()).isEqualTo(1);
    assertThat(page).isEqualTo(new PlanPage(3, true, 25L));
    assertCoversExactly(runId, 25, 10);
  }

  @Test
  void exactMultipleOfThePageEndsWithAnEmptyDonePage() {
    long runId = fixtures.runningRun(60, 10);

    List<PlanPage> pages = planAll(runId, 3);

    assertThat(pages).extracting(PlanPage::batchesCreated).containsExactly(3, 3, 0);
    assertCoversExactly(runId, 60, 10);
  }

  @Test
  void repeatedCallsAfterDoneChangeNothing() {
    long runId = fixtures.runningRun(25, 10);
    planAll(runId, 100);

    PlanPage again = planning.planNextPage(new PlanRequest(runId, 100));

    assertThat(again).isEqualTo(new PlanPage(0, true, 25L));
    assertThat(fixtures.batchRows(runId)).hasSize(3);
  }

  @Test
  void concurrentCallsNeverDuplicateBatches() throws Exception {
    long runId = fixtures.runningRun(2_000, 7);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<Void>> planners = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        planners.add(
            () -> {
              planAll(runId, 5);
              return null;
            });
      }
      for (Future<Void> future : pool.invokeAll(planners)) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }

    assertCoversExactly(runId, 2_000, 7);
    assertThat(fixtures.runRow(runId)).containsEntry("total_keys", 2_000L);
  }

  @Test
  void maxRecordsBoundsThePlannedKeys() {
    long runId = fixtures.run("running", "{\"items\":1000}", 10, 35L);

    List<PlanPage> pages = planAll(runId, 2);

    assertThat(pages.get(pages.size() - 1).totalKeys()).isEqualTo(35L);
    assertCoversExactly(runId, 35, 10);
    assertThat(fixtures.batchRows(runId)).hasSize(4);
  }

  @Test
  void emptyScopeIsDoneAtOnceWithZeroKeys() {
    long runId = fixtures.runningRun(0, 10);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 10));

    assertThat(page).isEqualTo(new PlanPage(0, true, 0L));
    assertThat(fixtures.batchRows(runId)).isEmpty();
    assertThat(fixtures.runRow(runId)).containsEntry("total_keys", 0L);
  }

  @Test
  void oneCallAsksForBoundedPagesOfKeysUntilItHasWhatItWasAskedFor() {
    long runId = fixtures.runningRun(250_000, 1_000);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 220));

    assertThat(page).isEqualTo(new PlanPage(220, false, null));
    assertThat(keysBackfill.largestLimit())
        .isLessThanOrEqualTo(PlanningActivitiesImpl.MAX_KEYS_PER_PAGE);
    assertThat(fixtures.runRow(runId)).containsEntry("plan_cursor", 220_000L);
    assertCoversExactly(runId, 220_000, 1_000);
  }

  @Test
  void oneCallPlansAWholeScopeLargerThanAPageOfKeys() {
    long runId = fixtures.runningRun(150_000, 1);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 1_000_000));

    assertThat(page).isEqualTo(new PlanPage(150_000, true, 150_000L));
    assertThat(keysBackfill.largestLimit())
        .isLessThanOrEqualTo(PlanningActivitiesImpl.MAX_KEYS_PER_PAGE);
    assertCoversExactly(runId, 150_000, 1);
  }

  @Test
  void aCallPastItsTimePlansNoFurtherPage() {
    long runId = fixtures.runningRun(250_000, 1_000);
    PlanningActivitiesImpl noTime =
        new PlanningActivitiesImpl(
            database,
            runs,
            batchStore,
            transactions,
            registry,
            optionsReader,
            engine,
            ticker,
            Duration.ZERO);

    PlanPage page = noTime.planNextPage(new PlanRequest(runId, 220));

    assertThat(page).isEqualTo(new PlanPage(100, false, null));
  }

  @Test
  void aCallPlansOnePageOfARunThatIsPausedOrBeingStopped() {
    long paused = fixtures.runningRun(250_000, 1_000);
    fixtures.setRunStatus(paused, "paused");
    long stopping = fixtures.runningRun(250_000, 1_000);
    fixtures.update("update runs set stop_requested_at = now() where id = ?", stopping);

    assertThat(planning.planNextPage(new PlanRequest(paused, 220)))
        .isEqualTo(new PlanPage(100, false, null));
    assertThat(planning.planNextPage(new PlanRequest(stopping, 220)))
        .isEqualTo(new PlanPage(100, false, null));
  }

  @Test
  void aCallStopsPlanningOnceTheWindowIsFull() {
    long runId = fixtures.runningRun(1_000_000, 1_000);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 900, 150));

    assertThat(page).isEqualTo(new PlanPage(200, false, null, 200));
    assertThat(planning.planNextPage(new PlanRequest(runId, 900, 150)))
        .isEqualTo(new PlanPage(0, false, null, 200));
  }

  @Test
  void batchLargerThanAPageIsStillPlannedWhole() {
    long runId = fixtures.runningRun(30_000, 25_000);

    List<PlanPage> pages = planAll(runId, 1);

    assertThat(pages).extracting(PlanPage::batchesCreated).containsExactly(1, 1);
    assertCoversExactly(runId, 30_000, 25_000);
  }

  @Test
  void permanentPlanningErrorIsNotRetryable() {
    long runId = fixtures.run("running", "{\"items\":10,\"planFailure\":\"permanent\"}", 10, null);

    assertThatThrownBy(() -> planning.planNextPage(new PlanRequest(runId, 10)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.PLANNING_PERMANENT.name());
              assertThat(failure.isNonRetryable()).isTrue();
              assertThat(failure.getOriginalMessage())
                  .isEqualTo("PermanentBackfillException: scope can never be planned");
            });
    assertThat(fixtures.runRow(runId)).containsEntry("plan_done", false);
  }

  @Test
  void transientPlanningErrorIsRetryable() {
    long runId = fixtures.run("running", "{\"items\":10,\"planFailure\":\"transient\"}", 10, null);

    assertThatThrownBy(() -> planning.planNextPage(new PlanRequest(runId, 10)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.PLANNING_FAILED.name());
              assertThat(failure.isNonRetryable()).isFalse();
            });
  }

  @Test
  void onlyFailedAttemptsSpendAPlanningCallsAttemptsNeverOnesThatDiedWithTheirWorker() {
    long runId = fixtures.run("running", "{\"items\":10,\"planFailure\":\"transient\"}", 10, null);
    TestActivityEnvironment temporal = TestActivityEnvironment.newInstance();
    try {
      temporal.registerActivitiesImplementations(planning);
      List<Integer> heartbeats = new CopyOnWriteArrayList<>();
      temporal.setActivityHeartbeatListener(Integer.class, heartbeats::add);
      PlanningActivities call =
          temporal.newActivityStub(
              PlanningActivities.class,
              ActivityOptions.newBuilder()
                  .setStartToCloseTimeout(Duration.ofMinutes(1))
                  .setHeartbeatTimeout(Duration.ofSeconds(30))
                  .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                  .build());
      // Attempts 1 and 2 died with their workers: they heartbeat no failed attempt, and Temporal
      // hands the next attempt what they heartbeat last. The policy allows 3 failed attempts.
      ApplicationFailure[] failures = new ApplicationFailure[3];
      for (int failed = 0; failed < failures.length; failed++) {
        temporal.setHeartbeatDetails(failed);
        failures[failed] = planningFailureOf(() -> call.planNextPage(new PlanRequest(runId, 10)));
      }

      assertThat(failures[0].isNonRetryable()).isFalse();
      assertThat(failures[0].getNextRetryDelay()).isEqualTo(Duration.ofSeconds(1));
      assertThat(failures[1].isNonRetryable()).isFalse();
      assertThat(failures[1].getNextRetryDelay()).isEqualTo(Duration.ofSeconds(2));
      assertThat(failures[2].isNonRetryable()).as("the third failed attempt is the last").isTrue();
      assertThat(failures[2].getType()).isEqualTo(DriplineFailure.PLANNING_FAILED.name());
      assertThat(heartbeats).as("each failure heartbeats its count").contains(1, 2, 3);
    } finally {
      temporal.close();
    }
  }

  private static ApplicationFailure planningFailureOf(Runnable call) {
    try {
      call.run();
    } catch (ActivityFailure failure) {
      if (failure.getCause() instanceof ApplicationFailure application) {
        return application;
      }
      throw failure;
    }
    throw new AssertionError("the planning call did not fail");
  }

  @Test
  void planningOnAWorkerWithoutTheDefinitionWaitsForOneThatHostsItSpendingNoAttempt() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.update("update runs set backfill = 'test.nobody' where id = ?", runId);
    TestActivityEnvironment temporal = TestActivityEnvironment.newInstance();
    try {
      temporal.registerActivitiesImplementations(planning);
      List<Integer> heartbeats = new CopyOnWriteArrayList<>();
      temporal.setActivityHeartbeatListener(Integer.class, heartbeats::add);
      temporal.setHeartbeatDetails(2);
      PlanningActivities call = oneAttemptStub(temporal);

      ApplicationFailure failure =
          planningFailureOf(() -> call.planNextPage(new PlanRequest(runId, 10)));

      assertThat(failure.getType()).isEqualTo(DriplineFailure.DEFINITION_NOT_HOSTED.name());
      assertThat(failure.isNonRetryable()).isFalse();
      assertThat(failure.getNextRetryDelay()).isEqualTo(Duration.ofSeconds(1));
      assertThat(heartbeats).as("the failed attempts' count, unchanged").containsOnly(2);
      assertThat(fixtures.batchRows(runId)).isEmpty();
    } finally {
      temporal.close();
    }
  }

  @Test
  void planningThatWaitedTheWholeWaitFailsNamingTheDefinitionAndTheWait() {
    long runId = fixtures.runningRun(10, 10);
    fixtures.update("update runs set backfill = 'test.nobody' where id = ?", runId);
    PlanningActivitiesImpl noWait =
        new PlanningActivitiesImpl(
            database,
            runs,
            batchStore,
            transactions,
            registry,
            optionsReader,
            withUnknownBackfillWait(engine, Duration.ZERO),
            ticker,
            Duration.ofHours(1));
    TestActivityEnvironment temporal = TestActivityEnvironment.newInstance();
    try {
      temporal.registerActivitiesImplementations(noWait);
      PlanningActivities call = oneAttemptStub(temporal);

      ApplicationFailure failure =
          planningFailureOf(() -> call.planNextPage(new PlanRequest(runId, 10)));

      assertThat(failure.getType()).isEqualTo(DriplineFailure.UNKNOWN_BACKFILL.name());
      assertThat(failure.isNonRetryable()).isTrue();
      assertThat(failure.getOriginalMessage())
          .isEqualTo(
              "no backfill definition named test.nobody is registered in the workers that took"
                  + " this task, and no worker that hosts it took it within 0s"
                  + " (dripline.engine.unknown-backfill-wait)");
    } finally {
      temporal.close();
    }
  }

  private static PlanningActivities oneAttemptStub(TestActivityEnvironment temporal) {
    return temporal.newActivityStub(
        PlanningActivities.class,
        ActivityOptions.newBuilder()
            .setStartToCloseTimeout(Duration.ofMinutes(1))
            .setHeartbeatTimeout(Duration.ofSeconds(30))
            .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
            .build());
  }

  private static EngineConfig withUnknownBackfillWait(EngineConfig e, Duration wait) {
    return new EngineConfig(
        e.safetyCap(),
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
        wait);
  }

  @Test
  void endedRunIsNotPlannedFurther() {
    long runId = fixtures.run("stopped", "{\"items\":100}", 10, null);

    PlanPage page = planning.planNextPage(new PlanRequest(runId, 10));

    assertThat(page.batchesCreated()).isZero();
    assertThat(fixtures.batchRows(runId)).isEmpty();
  }

  /**
   * A running run of {@code items} keys with batch size {@code batchSize}, tuned (P4) to {@code
   * targetMillis} within {@code min}..{@code max}, starting at {@code batchSize} within them, as
   * the app records a tuned run.
   */
  private long tunedRun(long items, int batchSize, long targetMillis, int min, int max) {
    long runId = fixtures.runningRun(items, batchSize);
    fixtures.update(
        "update runs set target_batch_millis = ?, min_batch_size = ?, max_batch_size = ?,"
            + " current_batch_size = ? where id = ?",
        targetMillis,
        min,
        max,
        Math.max(min, Math.min(max, batchSize)),
        runId);
    return runId;
  }

  /** Completes the run's pending batches, each measured to have held its slot {@code millis}. */
  private void completePendingIn(long runId, long millis) {
    fixtures.update(
        "update batches set status = 'completed', finished_at = now(),"
            + " enqueued_at = now() - ? * interval '1 millisecond'"
            + " where run_id = ? and status = 'pending'",
        millis,
        runId);
  }

  /** The sizes of the batches the last call planned, and the size the run records. */
  private List<Integer> sizesOfPendingBatches(long runId) {
    return fixtures.batchRows(runId).stream()
        .filter(row -> "pending".equals(row.get("status")))
        .map(row -> (Integer) row.get("size"))
        .toList();
  }

  private int recordedSize(long runId) {
    return (Integer) fixtures.runRow(runId).get("current_batch_size");
  }

  @Test
  void aTunedRunsFirstPageIsCutToItsStartingSizeAndRecordsIt() {
    long runId = tunedRun(10_000, 10, 1_000, 20, 500);

    planning.planNextPage(new PlanRequest(runId, 3));

    assertThat(sizesOfPendingBatches(runId)).containsExactly(20, 20, 20);
    assertThat(recordedSize(runId)).isEqualTo(20);
  }

  @Test
  void fastBatchesGrowATunedRunsNextPagesByAtMostHalfUpToItsLargestSize() {
    long runId = tunedRun(100_000, 20, 1_000, 20, 500);
    List<Integer> sizes = new ArrayList<>();
    for (int page = 0; page < 10; page++) {
      planning.planNextPage(new PlanRequest(runId, 2));
      List<Integer> planned = sizesOfPendingBatches(runId);
      assertThat(planned).hasSize(2).containsOnly(planned.get(0));
      assertThat(recordedSize(runId)).isEqualTo(planned.get(0));
      sizes.add(planned.get(0));
      // 1 ms per key whatever the size: 1,000 keys would take the target's second.
      completePendingIn(runId, planned.get(0));
    }

    assertThat(sizes).containsExactly(20, 30, 45, 67, 100, 150, 225, 337, 500, 500);
    assertCoversKeysInOrder(runId);
  }

  @Test
  void slowBatchesShrinkATunedRunsNextPagesByAtMostAThirdDownToItsLeastSize() {
    long runId = tunedRun(100_000, 300, 1_000, 100, 500);
    List<Integer> sizes = new ArrayList<>();
    for (int page = 0; page < 5; page++) {
      planning.planNextPage(new PlanRequest(runId, 2));
      int size = sizesOfPendingBatches(runId).get(0);
      sizes.add(size);
      // 100 ms per key: 10 keys would take the target's second.
      completePendingIn(runId, 100L * size);
    }

    assertThat(sizes).containsExactly(300, 200, 134, 100, 100);
  }

  @Test
  void aCallThatPlansSeveralPagesOfATunedRunTakesOneStep() {
    long runId = tunedRun(1_000_000, 20_000, 1_000, 1, 200_000);
    planning.planNextPage(new PlanRequest(runId, 2));
    // 20,000 keys in 200 ms: 100,000 would take the target's second, a step reaches 30,000.
    completePendingIn(runId, 200);

    // Pages of at most 100,000 keys: 3 batches of 30,000 each, 7 pages for the 20 asked for.
    PlanPage page = planning.planNextPage(new PlanRequest(runId, 20));

    assertThat(page.batchesCreated()).isEqualTo(20);
    assertThat(sizesOfPendingBatches(runId)).hasSize(20).containsOnly(30_000);
    assertThat(recordedSize(runId)).isEqualTo(30_000);
  }

  @Test
  void aTunedRunGoesOnFromTheSizeItRecordedNotFromItsBatchSize() {
    long runId = tunedRun(100_000, 20, 1_000, 20, 500);
    planning.planNextPage(new PlanRequest(runId, 2));
    completePendingIn(runId, 20);
    // As a new execution or worker finds it: the row is all that is kept.
    fixtures.update("update runs set current_batch_size = 200 where id = ?", runId);

    planning.planNextPage(new PlanRequest(runId, 2));

    assertThat(sizesOfPendingBatches(runId)).containsExactly(300, 300);
    assertThat(recordedSize(runId)).isEqualTo(300);
  }

  @Test
  void theMovingAverageReadsOnlyTheRunsLastCompletedBatches() {
    long runId = fixtures.runningRun(1_000, 10);
    fixtures.batches(runId, 30, 10, "pending");
    // Batches 1..10 took 10 s each, 11..30 100 ms; 31 is still pending.
    fixtures.update(
        "update batches set status = 'completed', finished_at = now(),"
            + " enqueued_at = now() - case when number <= 10 then interval '10 s'"
            + " else interval '100 ms' end where run_id = ?",
        runId);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " values (?, 31, dripline_bigint_key(301), dripline_bigint_key(310), 10,"
            + " 'pending')",
        runId);

    RecentBatches recent = batchStore.recentBatches(runId, BatchTuning.MEASURED_BATCHES);

    assertThat(recent.batches()).isEqualTo(20);
    assertThat(recent.keys()).isEqualTo(200);
    assertThat(recent.millis()).isCloseTo(2_000, within(1.0));
    assertThat(batchStore.recentBatches(fixtures.runningRun(10, 10), 20))
        .isEqualTo(new RecentBatches(0, 0, 0));
  }

  /**
   * The moving average is a bounded read: PostgreSQL plans it as a scan of {@code
   * batches_run_status_idx} within the run's completed batches, not down the primary key through
   * the pending batches planned ahead of them (up to a planning window: thousands).
   */
  @Test
  void theMovingAverageScansOnlyTheRunsCompletedBatchesByIndex() throws Exception {
    long runId = fixtures.runningRun(100_000, 1);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status,"
            + " enqueued_at, finished_at) select ?, n, dripline_bigint_key(n),"
            + " dripline_bigint_key(n), 1,"
            + " case when n <= 9000 then 'completed' else 'pending' end, now(), now()"
            + " from generate_series(1, 10000) n",
        runId);
    fixtures.update("analyze batches");
    String statement =
        BatchRepository.class
            .getMethod("recentBatches", long.class, int.class)
            .getAnnotation(Query.class)
            .value()
            .replace(":runId", Long.toString(runId))
            .replace(":limit", Integer.toString(BatchTuning.MEASURED_BATCHES));

    String plan =
        fixtures.rows("explain (format text) " + statement).stream()
            .map(row -> String.valueOf(row.values().iterator().next()))
            .reduce("", (a, b) -> a + b + "\n");

    assertThat(plan).contains("batches_run_status_idx").doesNotContain("batches_pkey");
    assertThat(batchStore.recentBatches(runId, BatchTuning.MEASURED_BATCHES).batches())
        .isEqualTo(20);
  }

  @Test
  void anUntunedRunIsCutToItsBatchSizeAndRecordsNoTunedSize() {
    long runId = fixtures.runningRun(1_000, 10);
    planning.planNextPage(new PlanRequest(runId, 2));
    completePendingIn(runId, 1);

    planning.planNextPage(new PlanRequest(runId, 2));

    assertThat(sizesOfPendingBatches(runId)).containsExactly(10, 10);
    assertThat(fixtures.runRow(runId).get("current_batch_size")).isNull();
  }

  /** Batches numbered 1..n cover keys 1..the last planned, each once, in order. */
  private void assertCoversKeysInOrder(long runId) {
    long expectedStart = 1;
    int number = 1;
    for (Map<String, Object> batch : fixtures.batchRows(runId)) {
      assertThat(batch.get("number")).isEqualTo(number++);
      assertThat(batch.get("start_key")).isEqualTo(expectedStart);
      long end = (Long) batch.get("end_key");
      assertThat(end - expectedStart + 1).isEqualTo(((Integer) batch.get("size")).longValue());
      expectedStart = end + 1;
    }
    assertThat(fixtures.runRow(runId).get("planned_keys")).isEqualTo(expectedStart - 1);
  }
}
