package dev.dripline.workflows.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Timestamp;
import dev.dripline.workflows.ReleaseHistories;
import dev.dripline.workflows.run.RunSearchAttributes;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.FakeTargetStore.Change;
import dev.dripline.workflows.targets.FakeTargetStore.PlanMode;
import dev.dripline.workflows.targets.FakeTargetStore.RunScript;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.WorkflowReplayer;
import io.temporal.worker.Worker;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The target workflow on Temporal's in-memory, time-skipping server, over an in-memory targets
 * table that applies {@link TargetTransitions} with compare-and-set semantics. Backoff windows are
 * checked against the skipped clock: base 30 s, cap 30 min, jitter [0.8, 1.2].
 */
class TargetWorkflowTest {
  private static final String QUEUE = "dripline-test";
  private static final Duration BASE = Duration.ofSeconds(30);
  private static final Duration CAP = Duration.ofMinutes(30);
  private static final Duration CAPACITY_RETRY = Duration.ofSeconds(5);

  private TestWorkflowEnvironment env;
  private WorkflowClient client;
  private FakeTargetStore store;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance();
    for (String name : List.of("DriplineBackfill", "DriplineRunStatus", "DriplineTarget")) {
      env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    store =
        new FakeTargetStore(
            () -> Instant.ofEpochMilli(env.currentTimeMillis()),
            new TargetSettings(
                BASE.toMillis(), CAP.toMillis(), CAPACITY_RETRY.toMillis(), 5_000, 10));
    // Capacity released: the targets next in line are woken, as the PostgreSQL activities do.
    store.waker =
        name -> {
          try {
            target(name).wake();
          } catch (RuntimeException e) {
            // Its workflow is not running (yet): it asks when it starts.
          }
        };
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(TargetWorkflowImpl.class, FakeRunWorkflow.class);
    worker.registerActivitiesImplementations(store);
    env.start();
    client = env.getWorkflowClient();
  }

  @AfterEach
  void tearDown() {
    store.releaseLostCompletions();
    env.close();
  }

  // Helpers

  private WorkflowExecution start(String name) {
    TargetWorkflow workflow =
        client.newWorkflowStub(
            TargetWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(TargetWorkflowIds.forTarget(name))
                .setTaskQueue(QUEUE)
                .build());
    return WorkflowClient.start(workflow::run, new TargetRef(name));
  }

  private TargetWorkflow target(String name) {
    return client.newWorkflowStub(TargetWorkflow.class, TargetWorkflowIds.forTarget(name));
  }

  private Instant now() {
    return Instant.ofEpochMilli(env.currentTimeMillis());
  }

  /**
   * Skips time in steps of about a sixtieth of {@code max} until the condition holds; fails after
   * {@code max}. Assertions use the times the store recorded, so the step size never matters.
   */
  private void advanceUntil(BooleanSupplier condition, Duration max) {
    Instant deadline = now().plus(max);
    Duration step = max.dividedBy(60);
    step = step.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : step;
    step = step.compareTo(Duration.ofMinutes(15)) > 0 ? Duration.ofMinutes(15) : step;
    while (!condition.getAsBoolean()) {
      assertThat(now()).as("workflow time at which the condition should hold").isBefore(deadline);
      env.sleep(step);
    }
  }

  /** The target workflow's pending planning activity, as the Web UI shows it. */
  private PendingActivityInfo pendingPlanning(String name) {
    List<PendingActivityInfo> pending =
        client
            .getWorkflowServiceStubs()
            .blockingStub()
            .describeWorkflowExecution(
                DescribeWorkflowExecutionRequest.newBuilder()
                    .setNamespace(client.getOptions().getNamespace())
                    .setExecution(
                        WorkflowExecution.newBuilder()
                            .setWorkflowId(TargetWorkflowIds.forTarget(name))
                            .build())
                    .build())
            .getPendingActivitiesList();
    assertThat(pending).hasSize(1);
    return pending.get(0);
  }

  private List<Change> failures(String name) {
    return store.changes(name, "planning-failed");
  }

  private static Duration between(Instant from, Instant to) {
    return Duration.between(from, to);
  }

  private static Duration jittered(Duration raw, double factor) {
    return Duration.ofMillis(Math.round(raw.toMillis() * factor));
  }

  private TargetSnapshot backfillingRecord(
      String name, long runId, int streak, Instant firstFailed) {
    return new TargetSnapshot(
        name,
        true,
        "example.copy-events",
        "org-1",
        TargetState.BACKFILLING,
        streak,
        firstFailed,
        firstFailed == null ? null : "earlier failure",
        null,
        null,
        runId,
        0,
        null,
        store.settings);
  }

  // T3: the streak and its backoff

  @Test
  void aLoadThatFailsWhilePostgresIsDownIsRetriedAndTheTargetGoesOn() {
    // The target's own statements are local activities, with the run workflow's options
    // (DatabaseLocalActivities): one that failed while PostgreSQL was down failed the whole
    // target workflow instead of being retried (docs/reliability.md, F3).
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    store.loadFailures = 3;

    start("t");
    advanceUntil(() -> failures("t").size() >= 1, Duration.ofMinutes(2));

    assertThat(store.loadFailures).isZero();
    assertThat(failures("t").get(0).after().consecutiveFailures()).isEqualTo(1);
    assertThat(
            client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget("t")).describe().getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
  }

  @Test
  void firstPlanningFailureStartsTheStreakAndBacksOff24To36Seconds() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);

    start("t");
    advanceUntil(() -> failures("t").size() >= 1, Duration.ofMinutes(1));

    Change first = failures("t").get(0);
    TargetSnapshot after = first.after();
    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.consecutiveFailures()).isEqualTo(1);
    assertThat(after.firstFailedAt()).isEqualTo(first.at());
    assertThat(after.lastError()).isEqualTo("injected planning failure 1");
    assertThat(after.currentRunId()).isNull();
    assertThat(between(first.at(), after.nextAttemptAt()))
        .isBetween(jittered(BASE, 0.8), jittered(BASE, 1.2));
    assertThat(after.failing()).isFalse();
  }

  @Test
  void secondPlanningFailureKeepsFirstFailedAtAndBacksOff48To72Seconds() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);

    start("t");
    advanceUntil(() -> failures("t").size() >= 2, Duration.ofMinutes(3));

    TargetSnapshot first = failures("t").get(0).after();
    Change second = failures("t").get(1);
    assertThat(second.after().consecutiveFailures()).isEqualTo(2);
    assertThat(second.after().firstFailedAt()).isEqualTo(first.firstFailedAt());
    assertThat(second.after().lastError()).isEqualTo("injected planning failure 2");
    assertThat(between(second.at(), second.after().nextAttemptAt()))
        .isBetween(jittered(BASE.multipliedBy(2), 0.8), jittered(BASE.multipliedBy(2), 1.2));
    // The second attempt waited out exactly the first backoff: not earlier, not much later.
    Instant secondAttempt = store.planAttempts("t").get(1);
    assertThat(secondAttempt).isAfterOrEqualTo(first.nextAttemptAt());
    assertThat(between(first.nextAttemptAt(), secondAttempt)).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void backoffNeverExceeds36MinutesAndAttemptsNeverStop() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    WorkflowExecution execution = start("t");

    advanceUntil(() -> failures("t").size() >= 22, Duration.ofHours(14));

    List<Change> all = failures("t");
    Duration ceiling = jittered(CAP, 1.2);
    for (int i = 0; i < all.size(); i++) {
      Change change = all.get(i);
      Duration raw = BASE.multipliedBy(1L << Math.min(i, 20));
      raw = raw.compareTo(CAP) > 0 ? CAP : raw;
      Duration delay = between(change.at(), change.after().nextAttemptAt());
      assertThat(change.after().consecutiveFailures()).isEqualTo(i + 1);
      assertThat(delay).as("delay after failure %d", i + 1).isLessThanOrEqualTo(ceiling);
      assertThat(delay)
          .as("delay after failure %d", i + 1)
          .isBetween(jittered(raw, 0.8), jittered(raw, 1.2));
      assertThat(change.after().firstFailedAt()).isEqualTo(all.get(0).at());
    }
    List<Instant> attempts = store.planAttempts("t");
    for (int i = 1; i < attempts.size(); i++) {
      assertThat(between(attempts.get(i - 1), attempts.get(i)))
          .isLessThanOrEqualTo(ceiling.plusSeconds(2));
    }
    assertThat(all.get(all.size() - 1).after().failing()).isTrue();
    WorkflowExecutionDescription description =
        client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget("t")).describe();
    assertThat(description.getStatus())
        .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
    assertThat(execution.getWorkflowId()).isEqualTo(TargetWorkflowIds.forTarget("t"));
    TargetSnapshot now = store.get("t");
    assertThat(now.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(now.nextAttemptAt()).isAfter(now());
  }

  @Test
  void planningFailuresAreRetriedByTemporalAfterTheRecordedGrowingBackoff() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    start("t");

    advanceUntil(() -> failures("t").size() >= 5, Duration.ofMinutes(20));

    List<Change> all = failures("t");
    List<Instant> attempts = store.planAttempts("t");
    for (int i = 0; i < 5; i++) {
      Change change = all.get(i);
      Duration raw = BASE.multipliedBy(1L << i);
      assertThat(change.after().consecutiveFailures()).isEqualTo(i + 1);
      assertThat(change.after().firstFailedAt()).isEqualTo(all.get(0).at());
      assertThat(between(change.at(), change.after().nextAttemptAt()))
          .as("delay after failure %d", i + 1)
          .isBetween(jittered(raw, 0.8), jittered(raw, 1.2));
      if (i + 1 < attempts.size()) {
        // Temporal's retry came when the record said: not earlier, not much later.
        assertThat(attempts.get(i + 1)).isAfterOrEqualTo(change.after().nextAttemptAt());
        assertThat(between(change.after().nextAttemptAt(), attempts.get(i + 1)))
            .isLessThan(Duration.ofSeconds(2));
      }
    }
    // Each planning attempt after the first is a retry of the same activity.
    assertThat(store.activityAttempts("t")).startsWith(1, 2, 3, 4, 5);
    assertThat(store.changes("t", "capacity-lost")).isEmpty();

    // The Web UI's pending activity shows the attempt and its failure (and, on a real server, the
    // next retry's time, which the in-memory server does not report).
    await()
        .untilAsserted(
            () -> {
              PendingActivityInfo pending = pendingPlanning("t");
              assertThat(pending.getActivityType().getName()).isEqualTo("TargetAttemptPlanning");
              assertThat(pending.getAttempt()).isGreaterThanOrEqualTo(5);
              assertThat(pending.getLastFailure().getMessage())
                  .startsWith("injected planning failure");
            });
    // The status query follows the recorded failures while the retries wait.
    await()
        .untilAsserted(
            () ->
                assertThat(target("t").status().consecutiveFailures())
                    .isEqualTo(store.get("t").consecutiveFailures()));
  }

  @Test
  void aReplanDuringTheRetryWaitCancelsItAndPlansAgainFromStreakZero() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    start("t");
    advanceUntil(() -> failures("t").size() >= 3, Duration.ofMinutes(10));
    // Now waiting out a backoff of about two minutes for Temporal's next retry.
    env.sleep(Duration.ofSeconds(10));

    store.planMode("t", PlanMode.SUCCEED);
    target("t").replan();
    Instant replannedAt = now();
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    assertThat(failures("t")).hasSize(3);
    Change replanned = store.changes("t", "replanned").get(0);
    assertThat(replanned.after().consecutiveFailures()).isZero();
    assertThat(replanned.after().nextAttemptAt()).isNull();
    List<Instant> attempts = store.planAttempts("t");
    assertThat(attempts).hasSize(4);
    assertThat(between(replannedAt, attempts.get(3))).isLessThan(Duration.ofSeconds(2));
    // A new planning activity, not the cancelled one's retry.
    List<Integer> activityAttempts = store.activityAttempts("t");
    assertThat(activityAttempts.get(activityAttempts.size() - 1)).isEqualTo(1);
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  @Test
  void aReplanByTheApiDuringTheRetryWaitPlansAtOnceAfterItsWake() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    start("t");
    advanceUntil(() -> failures("t").size() >= 2, Duration.ofMinutes(5));
    env.sleep(Duration.ofSeconds(5));

    store.planMode("t", PlanMode.SUCCEED);
    store.replanAsApi("t");
    Instant replannedAt = now();
    target("t").wake();
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    assertThat(between(replannedAt, store.planAttempts("t").get(2)))
        .isLessThan(Duration.ofSeconds(3));
    assertThat(failures("t")).hasSize(2);
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  @Test
  void deletingTheTargetDuringTheRetryWaitEndsItsWorkflowWithoutWaitingForTheRetry() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    start("t");
    advanceUntil(() -> failures("t").size() >= 3, Duration.ofMinutes(10));
    env.sleep(Duration.ofSeconds(10));

    store.delete("t");
    Instant deletedAt = now();
    target("t").wake();
    WorkflowStub.fromTyped(target("t")).getResult(Void.class);

    // The retry was due 86 s or more later (backoff 96–144 s, 10 s of it gone): the wake's reload
    // cancelled it. (The skipped clock runs on once nothing waits, so the close time is what
    // counts.)
    Timestamp closed =
        client
            .newUntypedWorkflowStub(TargetWorkflowIds.forTarget("t"))
            .describe()
            .getRawDescription()
            .getWorkflowExecutionInfo()
            .getCloseTime();
    Instant closedAt = Instant.ofEpochSecond(closed.getSeconds(), closed.getNanos());
    assertThat(between(deletedAt, closedAt)).isLessThan(Duration.ofSeconds(60));
    assertThat(store.planAttempts("t")).hasSize(3);
  }

  @Test
  void capacityLossBetweenTwoFailuresLeavesStreakFirstFailedAtAndNextAttemptUntouched() {
    store.groupMax = 1;
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    // Right after the first failure another target of the group takes the group's only slot.
    store.onChange =
        change -> {
          if (change.kind().equals("planning-failed")
              && change.after().consecutiveFailures() == 1) {
            store.put(backfillingRecord("blocker", 999, 0, null));
          }
        };
    start("t");
    advanceUntil(() -> failures("t").size() == 1, Duration.ofMinutes(1));
    TargetSnapshot afterFirst = failures("t").get(0).after();

    // Well past the backoff: the target keeps losing the capacity race.
    env.sleep(Duration.ofMinutes(3));

    assertThat(store.capacityLosses("t")).isGreaterThanOrEqualTo(10);
    assertThat(store.planAttempts("t")).hasSize(1);
    TargetSnapshot waiting = store.get("t");
    assertThat(waiting.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(waiting.consecutiveFailures()).isEqualTo(1);
    assertThat(waiting.firstFailedAt()).isEqualTo(afterFirst.firstFailedAt());
    assertThat(waiting.nextAttemptAt()).isEqualTo(afterFirst.nextAttemptAt());
    assertThat(waiting.lastError()).isEqualTo(afterFirst.lastError());
    for (Change lost : store.changes("t", "capacity-lost")) {
      assertThat(lost.after().consecutiveFailures()).isEqualTo(1);
      assertThat(lost.after().firstFailedAt()).isEqualTo(afterFirst.firstFailedAt());
      assertThat(lost.after().nextAttemptAt()).isEqualTo(afterFirst.nextAttemptAt());
    }

    // The retry that lost the race ended normally: every later call is a first attempt.
    assertThat(store.activityAttempts("t")).containsOnly(1, 2);
    assertThat(store.activityAttempts("t")).containsOnlyOnce(2);

    store.delete("blocker");
    Instant freed = now();
    advanceUntil(() -> failures("t").size() == 2, Duration.ofMinutes(1));

    // No second backoff was waited out: the next try came within one jittered capacity retry.
    Instant secondAttempt = store.planAttempts("t").get(1);
    assertThat(between(freed, secondAttempt))
        .isLessThanOrEqualTo(jittered(CAPACITY_RETRY, 1.2).plusSeconds(1));
    Change second = failures("t").get(1);
    assertThat(second.after().consecutiveFailures()).isEqualTo(2);
    assertThat(second.after().firstFailedAt()).isEqualTo(afterFirst.firstFailedAt());
    assertThat(between(second.at(), second.after().nextAttemptAt()))
        .isBetween(jittered(BASE.multipliedBy(2), 0.8), jittered(BASE.multipliedBy(2), 1.2));
  }

  @Test
  void permanentPlanningErrorNeedsResyncAndStopsAttemptsUntilReplan() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.PERMANENT);
    start("t");
    advanceUntil(() -> store.get("t").state() == TargetState.NEEDS_RESYNC, Duration.ofMinutes(1));

    TargetSnapshot resync = store.get("t");
    assertThat(resync.consecutiveFailures()).isEqualTo(1);
    assertThat(resync.nextAttemptAt()).isNull();
    assertThat(resync.lastError()).isEqualTo("unknown option 'tenant'");
    assertThat(resync.failing()).isTrue();
    env.sleep(Duration.ofHours(6));
    assertThat(store.planAttempts("t")).hasSize(1);
    // Not retried: the permanent failure is non-retryable.
    assertThat(store.activityAttempts("t")).containsExactly(1);
    assertThat(store.maxBackfilling()).isEqualTo(1);
    assertThat(store.get("t")).isEqualTo(resync);

    store.planMode("t", PlanMode.SUCCEED);
    target("t").replan();
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    Change replanned = store.changes("t", "replanned").get(0);
    assertThat(replanned.after().state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(replanned.after().consecutiveFailures()).isZero();
    assertThat(replanned.after().firstFailedAt()).isNull();
    assertThat(replanned.after().lastError()).isNull();
    assertThat(replanned.after().nextAttemptAt()).isNull();
    assertThat(store.replans()).isEqualTo(1);
    // Due at once: no backoff between the replan and the next attempt.
    assertThat(between(replanned.at(), store.planAttempts("t").get(1)))
        .isLessThan(Duration.ofSeconds(2));
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  @Test
  void replanByTheApiFollowedByWakeMakesABackedOffTargetDueAtOnce() {
    Instant failedAt = now();
    store.put(
        new TargetSnapshot(
            "t",
            true,
            "example.copy-events",
            "org-1",
            TargetState.PENDING_BACKFILL,
            5,
            failedAt,
            "boom",
            failedAt,
            failedAt.plus(Duration.ofMinutes(20)),
            null,
            0,
            null,
            store.settings));
    start("t");
    env.sleep(Duration.ofMinutes(1));
    assertThat(store.planAttempts("t")).isEmpty();

    store.replanAsApi("t");
    Instant replannedAt = now();
    target("t").wake();
    advanceUntil(() -> store.planAttempts("t").size() == 1, Duration.ofMinutes(1));

    assertThat(between(replannedAt, store.planAttempts("t").get(0)))
        .isLessThan(Duration.ofSeconds(3));
    assertThat(store.replans()).as("only the API's replan").isEqualTo(1);
  }

  @Test
  void replanSignalWhileBackfillingCancelsTheRunAndPlansAgain() {
    store.register("t", "org-1");
    store.runScripts("t", RunScript.runsForever(), RunScript.completesAfter(1));
    start("t");
    advanceUntil(() -> store.get("t").currentRunId() != null, Duration.ofMinutes(1));
    long firstRun = store.get("t").currentRunId();

    target("t").replan();
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    assertThat(store.runs.get(firstRun).status).isEqualTo(RunStatus.STOPPED);
    assertThat(store.planAttempts("t")).hasSize(2);
    assertThat(store.get("t").currentRunId()).isNotEqualTo(firstRun);
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  @Test
  void wakeWithoutAChangeChangesNothing() {
    Instant failedAt = now();
    TargetSnapshot resync =
        new TargetSnapshot(
            "t",
            true,
            "example.copy-events",
            "org-1",
            TargetState.NEEDS_RESYNC,
            4,
            failedAt,
            "boom",
            failedAt,
            null,
            null,
            0,
            null,
            store.settings);
    store.put(resync);
    start("t");
    env.sleep(Duration.ofMinutes(1));

    // What the API's dry-run replan amounts to for the workflow: at most a wake, no change.
    target("t").wake();
    target("t").wake();
    env.sleep(Duration.ofMinutes(10));

    assertThat(store.get("t")).isEqualTo(resync);
    assertThat(store.changes("t")).isEmpty();
    assertThat(store.planAttempts("t")).isEmpty();
    assertThat(store.replans()).isZero();
    assertThat(store.loads()).as("each wake reloads the record").isGreaterThanOrEqualTo(2);
  }

  // T4, T5: forward progress and failed runs

  @Test
  void savedPlanResetsTheStreak() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    store.runScripts("t", RunScript.runsForever());
    store.onChange =
        change -> {
          if (change.kind().equals("planning-failed")
              && change.after().consecutiveFailures() == 2) {
            store.planMode("t", PlanMode.SUCCEED);
          }
        };
    start("t");
    advanceUntil(() -> !store.changes("t", "planned").isEmpty(), Duration.ofMinutes(5));

    TargetSnapshot planned = store.changes("t", "planned").get(0).after();
    assertThat(planned.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(planned.consecutiveFailures()).isZero();
    assertThat(planned.firstFailedAt()).isNull();
    assertThat(planned.lastError()).isNull();
    assertThat(planned.currentRunId()).isNotNull();
    await()
        .until(
            () ->
                target("t").status().state() == TargetState.BACKFILLING
                    && target("t").status().consecutiveFailures() == 0);
  }

  @Test
  void completedBatchResetsTheStreak() {
    long run = store.existingRun("t", RunScript.progressesThenRunsForever());
    store.put(backfillingRecord("t", run, 2, now()));
    start("t");

    advanceUntil(() -> !store.changes("t", "progressed").isEmpty(), Duration.ofMinutes(1));

    TargetSnapshot progressed = store.get("t");
    assertThat(progressed.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(progressed.consecutiveFailures()).isZero();
    assertThat(progressed.firstFailedAt()).isNull();
    assertThat(progressed.lastError()).isNull();
    assertThat(progressed.currentRunId()).isEqualTo(run);
  }

  @Test
  void completedRunPrimesTheTargetAndResetsTheStreak() {
    long run = store.existingRun("t", RunScript.completesAfter(2));
    store.put(backfillingRecord("t", run, 4, now()));
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    TargetSnapshot primed = store.get("t");
    assertThat(primed.consecutiveFailures()).isZero();
    assertThat(primed.firstFailedAt()).isNull();
    assertThat(primed.lastError()).isNull();
    assertThat(primed.failing()).isFalse();
    assertThat(store.runs.get(run).polls).isEqualTo(2);
  }

  @Test
  void failedRunRaisesTheStreakToThreeOnceAndTheTargetIsRetried() {
    store.register("t", "org-1");
    store.runScripts("t", RunScript.failsAfter(2), RunScript.completesAfter(1));
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(10));

    List<Change> runFailures = store.changes("t", "run-failed");
    assertThat(runFailures).hasSize(1);
    Change failed = runFailures.get(0);
    assertThat(failed.after().state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(failed.after().consecutiveFailures()).isEqualTo(3);
    assertThat(failed.after().failing()).isTrue();
    assertThat(failed.after().currentRunId()).isNull();
    assertThat(failed.after().firstFailedAt()).isEqualTo(failed.at());
    Duration third = BASE.multipliedBy(4);
    assertThat(between(failed.at(), failed.after().nextAttemptAt()))
        .isBetween(jittered(third, 0.8), jittered(third, 1.2));
    assertThat(failures("t")).isEmpty();
    List<Instant> attempts = store.planAttempts("t");
    assertThat(attempts).hasSize(2);
    assertThat(attempts.get(1)).isAfterOrEqualTo(failed.after().nextAttemptAt());
    // While it waited it held no capacity slot: backfilling only around the two runs.
    assertThat(store.changes("t", "backfilling")).hasSize(2);
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  @Test
  void aRunThatKeepsFailingIsRetriedAndTheTargetStaysFailingWithAGrowingStreak() {
    store.register("t", "org-1");
    // Every execution of the target's run ends failed: the first one and each retry.
    store.runScripts("t", RunScript.failsAfter(2));
    start("t");

    advanceUntil(() -> store.changes("t", "run-failed").size() >= 5, Duration.ofHours(3));

    List<Change> runFailures = store.changes("t", "run-failed");
    // Each retry that ends failed again increments the streak (T5), so the backoff grows.
    assertThat(runFailures.subList(0, 5))
        .extracting(c -> c.after().consecutiveFailures())
        .containsExactly(3, 4, 5, 6, 7);
    Instant firstFailure = runFailures.get(0).at();
    for (Change failed : runFailures) {
      int streak = failed.after().consecutiveFailures();
      Duration raw = BASE.multipliedBy(1L << (streak - 1));
      raw = raw.compareTo(CAP) > 0 ? CAP : raw;
      assertThat(between(failed.at(), failed.after().nextAttemptAt()))
          .as("backoff after streak %d", streak)
          .isBetween(jittered(raw, 0.8), jittered(raw, 1.2));
      assertThat(failed.after().firstFailedAt()).isEqualTo(firstFailure);
    }
    // The automatic retries re-ran the failed batches of its one run (R8), no new full backfill.
    assertThat(store.runs.values()).filteredOn(run -> run.target.equals("t")).hasSize(1);
    // From its first failure on, the target is failing in every record it had: the stuck gauge
    // (computed from the record alone) counts it all along, not just between a failure and the
    // next plan.
    List<Change> all = store.changes("t");
    List<Change> sinceFirstFailure = all.subList(all.indexOf(runFailures.get(0)), all.size());
    assertThat(sinceFirstFailure)
        .allSatisfy(
            change ->
                assertThat(change.after().failing())
                    .as(
                        "%s at %s with streak %d",
                        change.kind(), change.at(), change.after().consecutiveFailures())
                    .isTrue());
    assertThat(store.get("t").failing()).isTrue();
    assertThat(failures("t")).as("planning failures").isEmpty();
  }

  @Test
  void aBatchOfTheRetriedRunCompletingResetsTheStreakAndTheRunCompletesTheBackfill() {
    store.register("t", "org-1");
    store.runScripts(
        "t",
        RunScript.failsAfter(2),
        RunScript.failsAfter(2),
        new RunScript(3, RunStatus.COMPLETED, true));
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofHours(1));

    assertThat(store.changes("t", "run-failed"))
        .extracting(c -> c.after().consecutiveFailures())
        .containsExactly(3, 4);
    // The second retry completed a batch: forward progress after a run failure (T4).
    Change progressed = store.changes("t", "progressed").get(0);
    assertThat(progressed.after().consecutiveFailures()).isZero();
    assertThat(progressed.after().firstFailedAt()).isNull();
    assertThat(progressed.after().failing()).isFalse();
    assertThat(store.changes("t", "retried")).hasSize(2);
    assertThat(store.runs.values()).filteredOn(run -> run.target.equals("t")).hasSize(1);
    assertThat(store.runs.values().iterator().next().executions).isEqualTo(3);
  }

  @Test
  void aReplanWhileAFailedRunWaitsForItsRetryPlansAFreshRun() {
    store.register("t", "org-1");
    store.runScripts("t", RunScript.failsAfter(2), RunScript.completesAfter(1));
    start("t");
    advanceUntil(() -> !store.changes("t", "run-failed").isEmpty(), Duration.ofMinutes(5));
    long failedRun = store.changes("t", "run-failed").get(0).after().retryRunId();

    target("t").replan();
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(5));

    assertThat(store.changes("t", "retried")).isEmpty();
    assertThat(store.get("t").currentRunId()).isNotEqualTo(failedRun);
    assertThat(store.get("t").consecutiveFailures()).isZero();
    assertThat(store.get("t").retryRunId()).isNull();
  }

  // T2: capacity

  @Test
  void globalAndGroupCapacityHoldWithManyPendingTargets() {
    for (int i = 0; i < 12; i++) {
      String name = "t" + i;
      store.register(name, "org-" + (i % 3));
      store.runScripts(name, RunScript.completesAfter(3));
      start(name);
    }

    advanceUntil(() -> store.allInState(TargetState.PRIMED), Duration.ofMinutes(30));

    assertThat(store.maxBackfilling()).isEqualTo(5);
    assertThat(store.maxBackfillingPerGroup().values())
        .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3));
    int losses = 0;
    for (int i = 0; i < 12; i++) {
      TargetSnapshot t = store.get("t" + i);
      assertThat(t.consecutiveFailures()).isZero();
      assertThat(t.firstFailedAt()).isNull();
      assertThat(t.nextAttemptAt()).isNull();
      assertThat(store.planAttempts("t" + i)).hasSize(1);
      losses += store.capacityLosses("t" + i);
    }
    assertThat(losses).as("capacity races lost").isPositive();
  }

  @Test
  void capacityGoesToTheTargetThatHasWaitedLongest() {
    store.globalMax = 1;
    List<String> names = List.of("t0", "t1", "t2", "t3", "t4");
    for (String name : names) {
      store.register(name, null);
      store.runScripts(name, RunScript.completesAfter(2));
      env.sleep(Duration.ofSeconds(1));
    }
    // The youngest asks first: the oldest must still get the one slot first (T1).
    for (int i = names.size() - 1; i >= 0; i--) {
      String name = names.get(i);
      start(name);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  !store.changes(name, "backfilling").isEmpty() || store.capacityLosses(name) > 0);
    }

    advanceUntil(() -> store.allInState(TargetState.PRIMED), Duration.ofMinutes(30));

    List<String> served =
        names.stream()
            .sorted(
                Comparator.comparing(
                    (String name) -> store.changes(name, "backfilling").get(0).at()))
            .toList();
    assertThat(served).containsExactlyElementsOf(names);
    assertThat(store.maxBackfilling()).isEqualTo(1);
    for (String name : names) {
      assertThat(store.planAttempts(name)).hasSize(1);
      assertThat(store.get(name).consecutiveFailures()).isZero();
    }
  }

  @Test
  void groupCapacityHoldsWhenOneGroupHasMoreTargetsThanItsCap() {
    for (int i = 0; i < 6; i++) {
      String name = "g" + i;
      store.register(name, "org-big");
      store.runScripts(name, RunScript.completesAfter(3));
      start(name);
    }

    advanceUntil(() -> store.allInState(TargetState.PRIMED), Duration.ofMinutes(30));

    assertThat(store.maxBackfillingPerGroup()).containsEntry("org-big", 3);
    assertThat(store.maxBackfilling()).isEqualTo(3);
  }

  @Test
  void aTargetLeftBackfillingWithoutARunIsPlannedWithoutTakingAnotherSlot() {
    store.put(
        new TargetSnapshot(
            "t",
            true,
            "example.copy-events",
            "org-1",
            TargetState.BACKFILLING,
            0,
            null,
            null,
            null,
            null,
            null,
            0,
            null,
            store.settings));
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    assertThat(store.planAttempts("t")).hasSize(1);
    assertThat(store.changes("t", "backfilling")).isEmpty();
  }

  @Test
  void aPlanWhoseAnswerWasLostIsRetriedAndAdoptsTheRunItSaved() {
    // A planning call silent for 2 s is presumed dead (the attempt's thread blocks for real).
    store.settings = new TargetSettings(BASE.toMillis(), CAP.toMillis(), 5_000, 5_000, 10, 2_000);
    store.register("t", "org-1");
    store.planMode("t", PlanMode.LOSE_COMPLETION_ONCE);
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(30));

    assertThat(store.lostCompletions()).isEqualTo(1);
    // Not a planning failure: no streak, nothing counted, no backoff.
    assertThat(failures("t")).isEmpty();
    assertThat(store.changes("t", "backfilling")).hasSize(1);
    // The retried call adopted the run its first try had saved: one run, no orphan.
    assertThat(store.runs.values()).filteredOn(run -> run.target.equals("t")).hasSize(1);
    long run = store.runs.values().stream().filter(r -> r.target.equals("t")).findFirst().get().id;
    assertThat(store.get("t").currentRunId()).isEqualTo(run);
    assertThat(store.get("t").consecutiveFailures()).isZero();
  }

  // Live batches

  @Test
  void primedTargetDrainsItsLiveBatchesInArrivalOrder() {
    store.register("t", "org-1");
    store.queueLive("t", 25);
    start("t");

    advanceUntil(() -> store.appliedLive("t") == 25, Duration.ofMinutes(1));

    assertThat(store.appliedOrder("t"))
        .containsExactlyElementsOf(LongStream.rangeClosed(1, 25).boxed().toList());
    assertThat(store.drainSizes()).containsExactly(10, 10, 5);
  }

  @Test
  void wakeDrainsNewLiveBatchesWithoutWaitingForThePoll() {
    store.settings = new TargetSettings(BASE.toMillis(), CAP.toMillis(), 5_000, 3_600_000, 10);
    store.register("t", "org-1");
    start("t");
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));
    env.sleep(Duration.ofMinutes(1));

    store.queueLive("t", 3);
    target("t").wake();
    env.sleep(Duration.ofSeconds(10));

    assertThat(store.appliedLive("t")).isEqualTo(3);
  }

  @Test
  void permanentLiveBatchFailureMovesThePrimedTargetToNeedsResync() {
    store.register("t", "org-1");
    store.liveFailing("t", true);
    store.queueLive("t", 2);
    start("t");

    advanceUntil(() -> store.get("t").state() == TargetState.NEEDS_RESYNC, Duration.ofMinutes(1));

    TargetSnapshot t = store.get("t");
    assertThat(t.consecutiveFailures()).isGreaterThanOrEqualTo(3);
    assertThat(t.failing()).isTrue();
    assertThat(store.appliedLive("t")).isZero();
    assertThat(t.queuedLiveBatches()).isEqualTo(2);
  }

  // Lifecycle, Temporal surface

  @Test
  void deletingTheTargetEndsItsWorkflow() {
    store.register("t", "org-1");
    start("t");
    advanceUntil(() -> store.get("t").state() == TargetState.PRIMED, Duration.ofMinutes(1));

    store.delete("t");
    target("t").wake();

    WorkflowStub.fromTyped(target("t")).getResult(Void.class);
    assertThat(target("t").status().state()).isNull();
  }

  @Test
  void theTargetAndItsRunCarrySearchAttributesAndTheRunIsAnAbandonedChild() {
    store.register("t", "org-1");
    store.runScripts("t", RunScript.runsForever());
    start("t");
    advanceUntil(() -> store.get("t").currentRunId() != null, Duration.ofMinutes(1));
    long runId = store.get("t").currentRunId();

    WorkflowExecutionDescription targetWorkflow =
        client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget("t")).describe();
    await()
        .ignoreExceptions()
        .until(
            () -> client.newUntypedWorkflowStub(RunWorkflowIds.forRun(runId)).describe() != null);
    WorkflowExecutionDescription run =
        client.newUntypedWorkflowStub(RunWorkflowIds.forRun(runId)).describe();

    assertThat(targetWorkflow.getTypedSearchAttributes().get(RunSearchAttributes.TARGET))
        .isEqualTo("t");
    assertThat(run.getTypedSearchAttributes().get(RunSearchAttributes.TARGET)).isEqualTo("t");
    assertThat(run.getTypedSearchAttributes().get(RunSearchAttributes.BACKFILL))
        .isEqualTo("example.copy-events");
    assertThat(run.getTypedSearchAttributes().get(RunSearchAttributes.RUN_STATUS))
        .isEqualTo("pending");
    assertThat(run.getStaticSummary()).isEqualTo("example.copy-events for target t");
    assertThat(run.getParentExecution().getWorkflowId())
        .isEqualTo(TargetWorkflowIds.forTarget("t"));
  }

  @Test
  void statusQueryReportsTheStreakAndWhetherTheTargetIsFailing() {
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    store.queueLive("t", 2);
    start("t");

    advanceUntil(() -> failures("t").size() >= 3, Duration.ofMinutes(10));

    await()
        .untilAsserted(
            () -> {
              TargetView view = target("t").status();
              TargetSnapshot record = store.get("t");
              assertThat(view.name()).isEqualTo("t");
              assertThat(view.consecutiveFailures()).isEqualTo(record.consecutiveFailures());
              assertThat(view.consecutiveFailures()).isGreaterThanOrEqualTo(3);
              assertThat(view.failing()).isTrue();
              assertThat(view.firstFailedAt()).isEqualTo(record.firstFailedAt());
              assertThat(view.nextAttemptAt()).isEqualTo(record.nextAttemptAt());
              assertThat(view.lastError()).startsWith("injected planning failure");
              assertThat(view.blockedLiveBatches()).isEqualTo(2);
            });
  }

  @Test
  void continuesAsNewAndKeepsServingTheTarget() {
    store.settings = new TargetSettings(BASE.toMillis(), CAP.toMillis(), 5_000, 1_000, 10);
    store.register("t", "org-1");
    WorkflowExecution first = start("t");

    advanceUntil(
        () -> store.loads() > TargetWorkflowImpl.MAX_ITERATIONS_PER_EXECUTION + 20,
        Duration.ofMinutes(30));

    EventType last =
        client.fetchHistory(first.getWorkflowId(), first.getRunId()).getLastEvent().getEventType();
    assertThat(last).isEqualTo(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    store.queueLive("t", 4);
    target("t").wake();
    advanceUntil(() -> store.appliedLive("t") == 4, Duration.ofSeconds(30));
    assertThat(store.planAttempts("t")).hasSize(1);
  }

  @Test
  void historyOfFailuresCapacityLossesAndAReplanReplaysDeterministically() throws Exception {
    store.groupMax = 1;
    store.register("t", "org-1");
    store.planMode("t", PlanMode.FAIL);
    store.runScripts("t", RunScript.completesAfter(2));
    store.onChange =
        change -> {
          if (change.kind().equals("planning-failed")
              && change.after().consecutiveFailures() == 2) {
            store.put(backfillingRecord("blocker", 999, 0, null));
          }
        };
    WorkflowExecution execution = start("t");
    advanceUntil(() -> store.capacityLosses("t") >= 3, Duration.ofMinutes(5));
    store.delete("blocker");
    store.planMode("t", PlanMode.SUCCEED);
    store.queueLive("t", 3);
    target("t").replan();
    advanceUntil(() -> store.appliedLive("t") == 3, Duration.ofMinutes(2));
    store.delete("t");
    target("t").wake();
    WorkflowStub.fromTyped(target("t")).getResult(Void.class);

    WorkflowExecutionHistory history =
        client.fetchHistory(execution.getWorkflowId(), execution.getRunId());
    WorkflowReplayer.replayWorkflowExecution(history, TargetWorkflowImpl.class);
    Optional<Path> release = ReleaseHistories.recording();
    Path file =
        Boolean.getBoolean("dripline.recordHistory")
            ? Path.of("src/test/resources", RECORDED_HISTORY)
            : release.map(r -> r.resolve(RELEASE_HISTORY)).orElse(null);
    if (file != null) {
      Files.createDirectories(file.getParent());
      Files.writeString(file, history.toJson(true));
    }
  }

  /**
   * Replays a history recorded by an earlier build of this workflow, so a change to its command
   * sequence that is not guarded by {@code Workflow.getVersion} fails here rather than in
   * production. {@code -Ddripline.recordHistory=true} records it again, from the scenario above;
   * {@code -Ddripline.recordRelease=<version>} records that scenario into the release's directory
   * ({@link ReleaseHistories}).
   */
  @Test
  void recordedHistoryReplaysAgainstTodaysCode() throws Exception {
    String json;
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(RECORDED_HISTORY)) {
      assertThat(in).as("recorded history %s", RECORDED_HISTORY).isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    WorkflowExecutionHistory history = WorkflowExecutionHistory.fromJson(json);
    assertThat(history.getEvents()).hasSizeGreaterThan(20);

    WorkflowReplayer.replayWorkflowExecution(history, TargetWorkflowImpl.class);
  }

  private static final String RECORDED_HISTORY =
      "histories/target-planning-on-retry-policy-failures-capacity-losses-and-replan.json";

  private static final String RELEASE_HISTORY = "target-failures-capacity-losses-and-replan.json";
}
