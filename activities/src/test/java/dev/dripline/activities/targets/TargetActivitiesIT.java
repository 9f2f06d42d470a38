package dev.dripline.activities.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.LiveBackfill;
import dev.dripline.activities.testing.TargetFixtures;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.runtime.config.TargetConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.run.BatchRequeue;
import dev.dripline.store.counters.DriplineCounterRepository;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.LiveBatchRepository;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.store.targets.TargetLine;
import dev.dripline.store.targets.TargetReplan;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.targets.CapacityResult;
import dev.dripline.workflows.targets.FailureStreak;
import dev.dripline.workflows.targets.LiveDrain;
import dev.dripline.workflows.targets.LiveDrainRequest;
import dev.dripline.workflows.targets.PlannedRun;
import dev.dripline.workflows.targets.PlanningAttempt;
import dev.dripline.workflows.targets.PlanningFailure;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.RunObservation;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class TargetActivitiesIT {
  @Inject TargetRecordActivitiesImpl recordActivities;
  @Inject TargetPlanningActivitiesImpl planningActivities;
  @Inject LiveBatchActivitiesImpl liveActivities;
  @Inject TargetWakeups wakeups;
  @Inject TargetOptions targetOptions;
  private Targets activities;
  @Inject TargetFixtures fixtures;
  @Inject LiveBackfill liveBackfill;
  @Inject Database database;
  @Inject TargetRepository records;
  @Inject LiveBatchRepository liveBatches;
  @Inject RunRepository runs;
  @Inject DriplineCounterRepository counters;
  @Inject TargetLine line;
  @Inject TargetReplan replans;
  @Inject DataTransactions transactions;
  @Inject BatchRequeue requeues;
  @Inject BackfillRegistry registry;
  @Inject EngineConfig engine;
  @Inject TargetConfig targetConfig;
  @Inject WorkflowClient client;
  @Inject TemporalConfig temporalConfig;
  @Inject HeartbeatTicker ticker;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  private static final String KEYS_OPTIONS = "{\"items\":25}";

  /** The target activities as the workflow calls them, each served by its implementation. */
  private record Targets(
      TargetRecordActivitiesImpl records,
      TargetPlanningActivitiesImpl planning,
      LiveBatchActivitiesImpl live) {
    CapacityResult acquireCapacity(TargetRef target) {
      return records.acquireCapacity(target);
    }

    TargetSnapshot recordPlanningFailure(PlanningFailure failure) {
      return records.recordPlanningFailure(failure);
    }

    TargetSnapshot observeRun(RunObservation observation) {
      return records.observeRun(observation);
    }

    PlannedRun plan(TargetRef target) {
      return planning.plan(target);
    }

    PlanningAttempt attemptPlanning(TargetRef target) {
      return planning.attemptPlanning(target);
    }

    LiveDrain applyLiveBatches(LiveDrainRequest request) {
      return live.applyLiveBatches(request);
    }
  }

  @BeforeEach
  void injected() {
    activities = new Targets(recordActivities, planningActivities, liveActivities);
  }

  /** The same activities with other capacity limits, counted on top of what the database holds. */
  private Targets withCaps(int extraGlobal, int group) {
    return withCaps(extraGlobal, group, run -> {});
  }

  /**
   * {@link #withCaps(int, int)}, with {@code whileRetrying} run after the run's batches are
   * re-queued and before the {@code retryRun} Update answers: what the run does meanwhile.
   */
  private Targets withCaps(int extraGlobal, int group, LongConsumer whileRetrying) {
    long backfilling =
        (Long)
            fixtures.row("select count(*) as n from targets where state = 'backfilling'").get("n");
    TargetConfig caps =
        new TargetConfig(
            targetConfig.plannerBackoffBase(),
            targetConfig.plannerBackoffCap(),
            (int) backfilling + extraGlobal,
            group,
            targetConfig.capacityRetry(),
            targetConfig.pollInterval(),
            targetConfig.liveBatchesPerDrain(),
            targetConfig.metricsInterval());
    TargetRecordActivitiesImpl capped =
        new TargetRecordActivitiesImpl(
            records,
            runs,
            counters,
            line,
            replans,
            transactions,
            engine,
            caps,
            client,
            temporalConfig,
            wakeups);
    TargetPlanningActivitiesImpl planning =
        new TargetPlanningActivitiesImpl(
            records,
            runs,
            transactions,
            registry,
            targetOptions,
            engine,
            client,
            temporalConfig,
            capped,
            wakeups,
            ticker,
            database) {
          /**
           * What the run's workflow does for the {@code retryRun} Update (no run worker polls here;
           * BackfillRunWorkflowTest and the standalone TargetsIT cover the workflow's side).
           */
          @Override
          RetryAnswer retryRun(String target, RunToStop run) {
            BatchRequeue.Outcome outcome = requeues.requeue(run.runId());
            whileRetrying.accept(run.runId());
            return outcome.didSomething()
                ? new RetryAnswer(outcome.requeued(), null, false)
                : new RetryAnswer(0, "nothing to re-queue", false);
          }
        };
    return new Targets(
        capped,
        planning,
        new LiveBatchActivitiesImpl(
            records, liveBatches, transactions, registry, targetOptions, capped, database));
  }

  private Map<String, Object> streakColumns(String name) {
    return fixtures.row(
        "select state, consecutive_failures, first_failed_at::text as first_failed_at,"
            + " next_attempt_at::text as next_attempt_at, last_error, current_run_id"
            + " from targets where name = ?",
        name);
  }

  private static Instant instant(Object timestamp) {
    return ((Timestamp) timestamp).toInstant();
  }

  private static ApplicationFailure failure(Throwable thrown) {
    assertThat(thrown).isInstanceOf(ApplicationFailure.class);
    return (ApplicationFailure) thrown;
  }

  // --- capacity ----------------------------------------------------------------------------

  @Test
  void acquireCapacityStopsAtTheGlobalCapAndALostRaceIsNeutral() {
    Targets capped = withCaps(2, 100);
    String first =
        fixtures.target("cap", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    String second =
        fixtures.target("cap", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    String third =
        fixtures.target("cap", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    fixtures.update(
        "update targets set consecutive_failures = 2, first_failed_at = now() - interval '5 min',"
            + " next_attempt_at = now() - interval '1 s', last_error = 'boom' where name = ?",
        third);
    Map<String, Object> before = streakColumns(third);

    CapacityResult a = capped.acquireCapacity(new TargetRef(first));
    CapacityResult b = capped.acquireCapacity(new TargetRef(second));
    CapacityResult c = capped.acquireCapacity(new TargetRef(third));

    assertThat(a.acquired()).isTrue();
    assertThat(a.target().state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(b.acquired()).isTrue();
    assertThat(c.acquired()).isFalse();
    assertThat(c.target().state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(c.target().consecutiveFailures()).isEqualTo(2);
    assertThat(streakColumns(third)).isEqualTo(before);
    assertThat(fixtures.targetRow(first)).containsEntry("state", "backfilling");
    // A repeat of a won call answers the same.
    assertThat(capped.acquireCapacity(new TargetRef(first)).acquired()).isTrue();
  }

  @Test
  void acquireCapacityStopsAtTheGroupCapButNotOtherGroups() {
    Targets capped = withCaps(10, 1);
    String group = TargetFixtures.uniqueName("group");
    String other = TargetFixtures.uniqueName("group");
    String first =
        fixtures.target("grp", KeysBackfill.NAME, KEYS_OPTIONS, group, "pending_backfill");
    String second =
        fixtures.target("grp", KeysBackfill.NAME, KEYS_OPTIONS, group, "pending_backfill");
    String elsewhere =
        fixtures.target("grp", KeysBackfill.NAME, KEYS_OPTIONS, other, "pending_backfill");
    String ungrouped =
        fixtures.target("grp", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    Map<String, Object> before = streakColumns(second);

    assertThat(capped.acquireCapacity(new TargetRef(first)).acquired()).isTrue();
    assertThat(capped.acquireCapacity(new TargetRef(second)).acquired()).isFalse();
    assertThat(capped.acquireCapacity(new TargetRef(elsewhere)).acquired()).isTrue();
    assertThat(capped.acquireCapacity(new TargetRef(ungrouped)).acquired()).isTrue();
    assertThat(streakColumns(second)).isEqualTo(before);
  }

  @Test
  void acquireCapacityIgnoresTargetsNotPending() {
    String primed = fixtures.target("cap", KeysBackfill.NAME, KEYS_OPTIONS, null, "primed");

    CapacityResult result = withCaps(5, 5).acquireCapacity(new TargetRef(primed));

    assertThat(result.acquired()).isFalse();
    assertThat(fixtures.targetRow(primed)).containsEntry("state", "primed");
    assertThat(activities.acquireCapacity(new TargetRef("no-such-target")).target().found())
        .isFalse();
  }

  /** A pending target that became eligible now, after those made eligible before it. */
  private String waitingTarget(String prefix) {
    String name = fixtures.target(prefix, KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    // It enters pending_backfill through a failed attempt, as a target of the planner does.
    activities.recordPlanningFailure(new PlanningFailure(name, "boom", false, 0.5));
    return name;
  }

  @Test
  void capacityGoesToTheTargetThatHasWaitedLongest() {
    // Pending targets left eligible by earlier, interrupted runs would stand in line first.
    fixtures.update(
        "delete from targets where name like 'it-%' and state = 'pending_backfill'"
            + " and created_at < now() - interval '10 minutes'");
    Targets capped = withCaps(1, 100);
    String oldest = waitingTarget("line");
    String middle = waitingTarget("line");
    String youngest = waitingTarget("line");
    // Their backoffs are over: all three are eligible, in the order they started waiting.
    for (String name : List.of(oldest, middle, youngest)) {
      fixtures.update(
          "update targets set next_attempt_at = now() - interval '1 second' where name = ?", name);
    }
    Map<String, Object> youngestBefore = streakColumns(youngest);

    CapacityResult youngestAsksFirst = capped.acquireCapacity(new TargetRef(youngest));
    CapacityResult middleAsksNext = capped.acquireCapacity(new TargetRef(middle));
    CapacityResult oldestAsksLast = capped.acquireCapacity(new TargetRef(oldest));

    assertThat(youngestAsksFirst.acquired()).as("the youngest waiter takes the slot").isFalse();
    assertThat(middleAsksNext.acquired()).as("the middle waiter takes the slot").isFalse();
    assertThat(oldestAsksLast.acquired()).as("the oldest waiter gets the slot").isTrue();
    assertThat(streakColumns(youngest)).isEqualTo(youngestBefore);
    assertThat(fixtures.targetRow(oldest)).containsEntry("state", "backfilling");
  }

  @Test
  void aTargetThatCannotGetCapacityAsksWithoutWaitingForTheCapacityLock() throws Exception {
    Targets capped = withCaps(0, 100);
    String waiting =
        fixtures.target("nolock", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    ExecutorService asker = Executors.newSingleThreadExecutor();
    try (Connection holder = database.dataSource().getConnection()) {
      // Another decision holds the capacity lock for as long as it likes.
      try (PreparedStatement lock = holder.prepareStatement("select pg_advisory_lock(?)")) {
        lock.setLong(1, TargetRecordActivitiesImpl.CAPACITY_LOCK);
        lock.execute();
      }
      try {
        Future<CapacityResult> answer =
            asker.submit(() -> capped.acquireCapacity(new TargetRef(waiting)));

        // No capacity is free: the answer needs no lock, so it comes while the lock is held.
        CapacityResult result = answer.get(60, TimeUnit.SECONDS);

        assertThat(result.acquired()).isFalse();
        assertThat(result.target().state()).isEqualTo(TargetState.PENDING_BACKFILL);
      } finally {
        try (PreparedStatement unlock = holder.prepareStatement("select pg_advisory_unlock(?)")) {
          unlock.setLong(1, TargetRecordActivitiesImpl.CAPACITY_LOCK);
          unlock.execute();
        }
      }
    } finally {
      asker.shutdownNow();
    }
  }

  @Test
  void aTargetWhoseBackoffHasNotEndedGetsNoCapacityAndPlansNothing() {
    Targets roomy = withCaps(5, 100);
    String name = waitingTarget("early");
    // Temporal's own retry of a planning attempt (after a lost answer or a heartbeat timeout) can
    // come long before the target's backoff ends.
    fixtures.update(
        "update targets set next_attempt_at = now() + interval '10 minutes' where name = ?", name);
    Map<String, Object> before = streakColumns(name);

    CapacityResult capacity = roomy.acquireCapacity(new TargetRef(name));
    PlanningAttempt attempt = roomy.attemptPlanning(new TargetRef(name));

    assertThat(capacity.acquired()).isFalse();
    assertThat(attempt.run()).isNull();
    assertThat(attempt.target().state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(streakColumns(name)).isEqualTo(before);
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).isEmpty();
  }

  // --- planning ----------------------------------------------------------------------------

  @Test
  void planCreatesOneRunResetsTheStreakAndIsIdempotent() {
    String name = fixtures.target("plan", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    fixtures.update(
        "update targets set consecutive_failures = 2, first_failed_at = now(),"
            + " last_error = 'earlier', observed_processed_keys = 9 where name = ?",
        name);

    PlannedRun planned = activities.plan(new TargetRef(name));
    PlannedRun again = activities.plan(new TargetRef(name));

    assertThat(again).isEqualTo(planned);
    assertThat(planned.backfill()).isEqualTo(KeysBackfill.NAME);
    assertThat(planned.summary()).isEqualTo("test.keys · target " + name + " · batch size 10");
    List<Map<String, Object>> runs =
        fixtures.rows("select * from runs where target_name = ?", name);
    assertThat(runs).hasSize(1);
    assertThat(runs.get(0))
        .containsEntry("id", planned.runId())
        .containsEntry("backfill", KeysBackfill.NAME)
        .containsEntry("status", "pending")
        .containsEntry("batch_size", 10)
        .containsEntry("max_parallel_batches", 7)
        .containsEntry("options_key", "{\"items\":25,\"planFailure\":\"none\"}")
        .containsEntry("created_by", "target:" + name)
        .containsEntry("workflow_id", "dripline-run-" + planned.runId());
    assertThat(fixtures.targetRow(name))
        .containsEntry("state", "backfilling")
        .containsEntry("current_run_id", planned.runId())
        .containsEntry("consecutive_failures", 0)
        .containsEntry("first_failed_at", null)
        .containsEntry("last_error", null)
        .containsEntry("observed_processed_keys", 0L);
    assertThat(fixtures.targetRow(name).get("last_attempt_at")).isNotNull();
  }

  @Test
  void aTargetsRunIsTunedAsItsDefinitionSays() {
    String tenant = TargetFixtures.uniqueName("tenant");
    String name =
        fixtures.target(
            "tune", LiveBackfill.NAME, "{\"tenant\":\"" + tenant + "\"}", null, "backfilling");

    PlannedRun planned = activities.plan(new TargetRef(name));

    // test.live: a second per batch, at least 20 keys, no largest size (the default), batch 50.
    assertThat(fixtures.row("select * from runs where id = ?", planned.runId()))
        .containsEntry("target_batch_millis", 1_000L)
        .containsEntry("min_batch_size", 20)
        .containsEntry("max_batch_size", 100_000)
        .containsEntry("current_batch_size", 50);
    String untuned = fixtures.target("tune", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    PlannedRun plain = activities.plan(new TargetRef(untuned));
    assertThat(fixtures.row("select * from runs where id = ?", plain.runId()))
        .containsEntry("target_batch_millis", null)
        .containsEntry("current_batch_size", null);
  }

  @Test
  void planUsesTheTargetNameAsFaultTagWhenTheDefinitionDeclaresOne() {
    String tenant = TargetFixtures.uniqueName("tenant");
    String name =
        fixtures.target(
            "tag", LiveBackfill.NAME, "{\"tenant\":\"" + tenant + "\"}", null, "backfilling");

    PlannedRun planned = activities.plan(new TargetRef(name));

    assertThat(liveBackfill.probedOptions(tenant)).containsEntry("faultTag", name);
    assertThat(fixtures.row("select options_key from runs where id = ?", planned.runId()))
        .containsEntry(
            "options_key", "{\"faultTag\":\"" + name + "\",\"tenant\":\"" + tenant + "\"}");
  }

  @Test
  void planWithInvalidOptionsIsPermanent() {
    String name =
        fixtures.target("bad", KeysBackfill.NAME, "{\"items\":\"many\"}", null, "backfilling");

    assertThatThrownBy(() -> activities.plan(new TargetRef(name)))
        .satisfies(
            thrown -> {
              ApplicationFailure failure = failure(thrown);
              assertThat(failure.getType()).isEqualTo("TARGET_PLANNING_PERMANENT");
              assertThat(failure.isNonRetryable()).isTrue();
              assertThat(failure.getOriginalMessage()).contains("options.items");
            });
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).isEmpty();
  }

  @Test
  void planFailuresOfTheDefinitionAreTypedByPermanence() {
    String permanent =
        fixtures.target(
            "perm",
            KeysBackfill.NAME,
            "{\"items\":5,\"planFailure\":\"permanent\"}",
            null,
            "backfilling");
    String transientFailure =
        fixtures.target(
            "tran",
            KeysBackfill.NAME,
            "{\"items\":5,\"planFailure\":\"transient\"}",
            null,
            "backfilling");

    assertThatThrownBy(() -> activities.plan(new TargetRef(permanent)))
        .satisfies(
            thrown -> {
              assertThat(failure(thrown).getType()).isEqualTo("TARGET_PLANNING_PERMANENT");
              assertThat(failure(thrown).isNonRetryable()).isTrue();
            });
    assertThatThrownBy(() -> activities.plan(new TargetRef(transientFailure)))
        .satisfies(
            thrown -> {
              assertThat(failure(thrown).getType()).isEqualTo("TARGET_PLANNING_FAILED");
              assertThat(failure(thrown).isNonRetryable()).isFalse();
            });
    assertThat(fixtures.rows("select id from runs where target_name = ?", transientFailure))
        .isEmpty();
  }

  @Test
  void planAdoptsAPendingRunWhoseCreationTheWorkflowNeverLearnedOf() {
    String name = fixtures.target("adopt", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    PlannedRun lost = activities.plan(new TargetRef(name));
    // The attempt's result was lost, and the target lost track of its run (as a workflow from
    // before planning calls were retried did, recording a failure); its attempt is the same.
    fixtures.update(
        "update targets set current_run_id = null, consecutive_failures = 1 where name = ?", name);

    PlannedRun adopted = activities.plan(new TargetRef(name));

    assertThat(adopted.runId()).isEqualTo(lost.runId());
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).hasSize(1);
    assertThat(fixtures.targetRow(name))
        .containsEntry("current_run_id", lost.runId())
        .containsEntry("consecutive_failures", 0);
  }

  @Test
  void aRetriedPlanAdoptsTheRunItsFirstTrySavedWhateverBecameOfIt() {
    Targets capped = withCaps(1, 100);
    String name =
        fixtures.target("retried", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    assertThat(capped.acquireCapacity(new TargetRef(name)).acquired()).isTrue();
    PlannedRun first = capped.plan(new TargetRef(name));
    // Its answer was lost (the worker died after the commit) and the engine retries the call
    // later; meanwhile the run was started by the reconciler and has completed.
    fixtures.update(
        "update runs set status = 'completed', finished_at = now() where id = ?", first.runId());

    PlannedRun retried = capped.plan(new TargetRef(name));

    assertThat(retried.runId()).isEqualTo(first.runId());
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).hasSize(1);
    assertThat(fixtures.targetRow(name))
        .containsEntry("state", "backfilling")
        .containsEntry("current_run_id", first.runId())
        .containsEntry("consecutive_failures", 0);
  }

  @Test
  void planNeverAdoptsARunLeftByAnEarlierTargetOfTheSameName() {
    String name = fixtures.target("again", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    // A run of a deleted target of the same name, left pending (never started).
    long old = fixtures.run(name, KeysBackfill.NAME, "pending");
    fixtures.update("update runs set created_at = now() - interval '1 hour' where id = ?", old);

    // The old run is sent the stop, and the target waits (streak-neutral) until it has ended.
    assertThatThrownBy(() -> activities.plan(new TargetRef(name)))
        .satisfies(
            thrown -> assertThat(failure(thrown).getType()).isEqualTo("PREVIOUS_RUN_ACTIVE"));
    assertThat(signals(client, old)).containsExactly("stop");
    // What the old run's workflow does with the stop.
    fixtures.update("update runs set status = 'stopped' where id = ?", old);

    PlannedRun planned = activities.plan(new TargetRef(name));

    assertThat(planned.runId()).isNotEqualTo(old);
    assertThat(fixtures.targetRow(name)).containsEntry("current_run_id", planned.runId());
  }

  /** The signals in the history of run {@code runId}'s workflow. */
  private static List<String> signals(WorkflowClient client, long runId) {
    return client.fetchHistory(RunWorkflowIds.forRun(runId)).getEvents().stream()
        .filter(HistoryEvent::hasWorkflowExecutionSignaledEventAttributes)
        .map(e -> e.getWorkflowExecutionSignaledEventAttributes().getSignalName())
        .toList();
  }

  @Test
  void planWaitsNeutrallyWhileACancelledRunIsStillStopping() {
    String name = fixtures.target("busy", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    PlannedRun cancelled = activities.plan(new TargetRef(name));
    fixtures.update("update runs set status = 'running' where id = ?", cancelled.runId());
    // Replanned, then a slot taken again: a new planning attempt.
    fixtures.update(
        "update targets set current_run_id = null, consecutive_failures = 2,"
            + " attempt_id = nextval('target_attempts') where name = ?",
        name);

    assertThatThrownBy(() -> activities.plan(new TargetRef(name)))
        .satisfies(
            thrown -> assertThat(failure(thrown).getType()).isEqualTo("PREVIOUS_RUN_ACTIVE"));
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).hasSize(1);
    assertThat(fixtures.targetRow(name)).containsEntry("consecutive_failures", 2);
  }

  @Test
  void planRefusesATargetThatIsNotBackfilling() {
    String name = fixtures.target("sup", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");

    assertThatThrownBy(() -> activities.plan(new TargetRef(name)))
        .satisfies(thrown -> assertThat(failure(thrown).getType()).isEqualTo("TARGET_SUPERSEDED"));
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).isEmpty();
  }

  // --- planning failures -------------------------------------------------------------------

  private long planningFailures() {
    return (Long)
        fixtures
            .row("select value from dripline_counters where name = 'planning_failures_total'")
            .get("value");
  }

  // --- one planning attempt under the retry policy ------------------------------------------

  @Test
  void attemptPlanningTakesCapacityPlansOnceAndARepeatAdoptsTheRun() {
    Targets roomy = withCaps(5, 100);
    String name =
        fixtures.target("attempt", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");

    PlanningAttempt first = roomy.attemptPlanning(new TargetRef(name));
    // A repeat of the attempt (its answer was lost): the same run, no second one (T4).
    PlanningAttempt again = roomy.attemptPlanning(new TargetRef(name));

    assertThat(first.run()).isNotNull();
    assertThat(again.run()).isEqualTo(first.run());
    assertThat(first.target().state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(first.target().currentRunId()).isEqualTo(first.run().runId());
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).hasSize(1);
  }

  @Test
  void attemptPlanningThatGetsNoCapacityAnswersNeutrallyWithoutFailing() {
    Targets full = withCaps(0, 100);
    String name =
        fixtures.target("nocap", KeysBackfill.NAME, KEYS_OPTIONS, null, "pending_backfill");
    fixtures.update(
        "update targets set consecutive_failures = 2, first_failed_at = now() - interval '5 min',"
            + " next_attempt_at = now() - interval '1 s', last_error = 'boom' where name = ?",
        name);
    Map<String, Object> before = streakColumns(name);
    long countBefore = planningFailures();

    PlanningAttempt attempt = full.attemptPlanning(new TargetRef(name));

    assertThat(attempt.run()).isNull();
    assertThat(attempt.target().state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(streakColumns(name)).isEqualTo(before);
    assertThat(planningFailures()).isEqualTo(countBefore);
  }

  @Test
  void attemptPlanningRecordsATransientFailureAndRetriesAfterExactlyTheRecordedBackoff() {
    Targets roomy = withCaps(5, 100);
    String name =
        fixtures.target(
            "tfail",
            KeysBackfill.NAME,
            "{\"items\":5,\"planFailure\":\"transient\"}",
            null,
            "pending_backfill");
    long countBefore = planningFailures();

    assertThatThrownBy(() -> roomy.attemptPlanning(new TargetRef(name)))
        .satisfies(
            thrown -> {
              ApplicationFailure failure = failure(thrown);
              assertThat(failure.getType()).isEqualTo("TARGET_PLANNING_FAILED");
              assertThat(failure.isNonRetryable()).isFalse();
              Map<String, Object> row = fixtures.targetRow(name);
              assertThat(row)
                  .containsEntry("state", "pending_backfill")
                  .containsEntry("consecutive_failures", 1)
                  .containsEntry("current_run_id", null);
              Instant attempt = instant(row.get("last_attempt_at"));
              Instant next = instant(row.get("next_attempt_at"));
              assertThat(instant(row.get("first_failed_at"))).isEqualTo(attempt);
              // Temporal's next retry comes exactly when the record says (T3's jitter included).
              assertThat(failure.getNextRetryDelay()).isEqualTo(Duration.between(attempt, next));
              assertThat(failure.getNextRetryDelay())
                  .isBetween(Duration.ofSeconds(24), Duration.ofSeconds(36));
              assertThat(failure.getOriginalMessage()).contains("(failure 1 since ");
            });
    assertThat(planningFailures()).isEqualTo(countBefore + 1);
    assertThat(fixtures.rows("select id from runs where target_name = ?", name)).isEmpty();

    // The retry once due: the streak grows, its start stays, the backoff doubles.
    fixtures.update("update targets set next_attempt_at = now() where name = ?", name);
    Object firstFailedAt = fixtures.targetRow(name).get("first_failed_at");
    assertThatThrownBy(() -> roomy.attemptPlanning(new TargetRef(name)))
        .satisfies(
            thrown ->
                assertThat(failure(thrown).getNextRetryDelay())
                    .isBetween(Duration.ofSeconds(48), Duration.ofSeconds(72)));
    assertThat(fixtures.targetRow(name))
        .containsEntry("consecutive_failures", 2)
        .containsEntry("first_failed_at", firstFailedAt);
  }

  @Test
  void attemptPlanningRecordsAPermanentFailureAsNeedsResyncAndIsNotRetried() {
    Targets roomy = withCaps(5, 100);
    String name =
        fixtures.target(
            "pfail",
            KeysBackfill.NAME,
            "{\"items\":5,\"planFailure\":\"permanent\"}",
            null,
            "pending_backfill");

    assertThatThrownBy(() -> roomy.attemptPlanning(new TargetRef(name)))
        .satisfies(
            thrown -> {
              assertThat(failure(thrown).getType()).isEqualTo("TARGET_PLANNING_PERMANENT");
              assertThat(failure(thrown).isNonRetryable()).isTrue();
            });
    assertThat(fixtures.targetRow(name))
        .containsEntry("state", "needs_resync")
        .containsEntry("consecutive_failures", 1)
        .containsEntry("next_attempt_at", null);
  }

  @Test
  void recordPlanningFailureBacksOffFromItsOwnAnchorAndCounts() {
    String name = fixtures.target("fail", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    long countBefore = planningFailures();

    TargetSnapshot after =
        activities.recordPlanningFailure(new PlanningFailure(name, "boom", false, 0.73));

    Map<String, Object> row = fixtures.targetRow(name);
    assertThat(row)
        .containsEntry("state", "pending_backfill")
        .containsEntry("consecutive_failures", 1)
        .containsEntry("last_error", "boom")
        .containsEntry("current_run_id", null);
    Instant attempt = instant(row.get("last_attempt_at"));
    Instant next = instant(row.get("next_attempt_at"));
    assertThat(instant(row.get("first_failed_at"))).isEqualTo(attempt);
    assertThat(Duration.between(attempt, next))
        .isBetween(Duration.ofSeconds(24), Duration.ofSeconds(36));
    // base 30 s · jitter (0.8 + 0.4 · 0.73)
    assertThat(Duration.between(attempt, next).toMillis()).isCloseTo(32_760L, within(1L));
    Instant now = instant(fixtures.row("select now() as now").get("now"));
    assertThat(Duration.between(now, next).toSeconds()).isBetween(23L, 36L);
    assertThat(after.consecutiveFailures()).isEqualTo(1);
    assertThat(planningFailures()).isEqualTo(countBefore + 1);

    // The next attempt takes a capacity slot again before it can fail.
    fixtures.update("update targets set state = 'backfilling' where name = ?", name);
    activities.recordPlanningFailure(new PlanningFailure(name, "again", false, 0.5));

    Map<String, Object> second = fixtures.targetRow(name);
    assertThat(second)
        .containsEntry("consecutive_failures", 2)
        .containsEntry("last_error", "again");
    assertThat(instant(second.get("first_failed_at"))).isEqualTo(attempt);
    assertThat(
            Duration.between(
                instant(second.get("last_attempt_at")), instant(second.get("next_attempt_at"))))
        .isEqualTo(Duration.ofSeconds(60));
    assertThat(planningFailures()).isEqualTo(countBefore + 2);
  }

  @Test
  void recordPlanningFailurePermanentNeedsResyncAndOperatorStatesAreLeftAlone() {
    String name = fixtures.target("perm", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    String primed = fixtures.target("perm", KeysBackfill.NAME, KEYS_OPTIONS, null, "primed");

    activities.recordPlanningFailure(new PlanningFailure(name, "never", true, 0.5));
    long counted = planningFailures();
    TargetSnapshot untouched =
        activities.recordPlanningFailure(new PlanningFailure(primed, "late", false, 0.5));

    assertThat(fixtures.targetRow(name))
        .containsEntry("state", "needs_resync")
        .containsEntry("consecutive_failures", 1)
        .containsEntry("next_attempt_at", null);
    assertThat(untouched.state()).isEqualTo(TargetState.PRIMED);
    assertThat(fixtures.targetRow(primed)).containsEntry("consecutive_failures", 0);
    assertThat(planningFailures()).isEqualTo(counted);
  }

  // --- observing the run -------------------------------------------------------------------

  /** A backfilling target whose current run is a new run in {@code status}. */
  private String[] backfillingWithRun(String status, int streak) {
    String name = fixtures.target("obs", KeysBackfill.NAME, KEYS_OPTIONS, null, "backfilling");
    long runId = fixtures.run(name, KeysBackfill.NAME, status);
    fixtures.update(
        "update targets set current_run_id = ?, consecutive_failures = ?,"
            + " first_failed_at = case when ? > 0 then now() - interval '1 hour' end,"
            + " last_error = case when ? > 0 then 'old' end where name = ?",
        runId,
        streak,
        streak,
        streak,
        name);
    return new String[] {name, Long.toString(runId)};
  }

  private TargetSnapshot observe(String[] target, double draw) {
    return activities.observeRun(new RunObservation(target[0], Long.parseLong(target[1]), draw));
  }

  @Test
  void observeRunProgressResetsTheStreakOnce() {
    String[] target = backfillingWithRun("running", 2);
    fixtures.update(
        "update run_key_counts set processed_keys = 5 where run_id = ? and shard = 3",
        Long.parseLong(target[1]));

    TargetSnapshot after = observe(target, 0.5);

    assertThat(after.consecutiveFailures()).isZero();
    assertThat(after.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(fixtures.targetRow(target[0]))
        .containsEntry("consecutive_failures", 0)
        .containsEntry("first_failed_at", null)
        .containsEntry("observed_processed_keys", 5L);
    // No new progress: nothing changes, even after a failure streak is recorded elsewhere.
    fixtures.update("update targets set consecutive_failures = 1 where name = ?", target[0]);
    assertThat(observe(target, 0.5).consecutiveFailures()).isEqualTo(1);
  }

  @Test
  void observeRunCompletedPrimesTheTarget() {
    String[] target = backfillingWithRun("completed", 2);

    TargetSnapshot after = observe(target, 0.5);

    assertThat(after.state()).isEqualTo(TargetState.PRIMED);
    Map<String, Object> row = fixtures.targetRow(target[0]);
    assertThat(row).containsEntry("state", "primed").containsEntry("consecutive_failures", 0);
    assertThat(row.get("primed_at")).isNotNull();
  }

  @Test
  void observeRunFailedRaisesTheStreakToTheThresholdOnce() {
    String[] target = backfillingWithRun("failed", 0);
    fixtures.update(
        "update runs set error = '2 batches failed' where id = ?", Long.parseLong(target[1]));

    TargetSnapshot after = observe(target, 0.5);
    Map<String, Object> first = streakColumns(target[0]);
    TargetSnapshot again = observe(target, 0.9);

    assertThat(after.state()).isEqualTo(TargetState.PENDING_BACKFILL);
    assertThat(after.consecutiveFailures()).isEqualTo(3);
    assertThat(after.failing()).isTrue();
    assertThat(first)
        .containsEntry("state", "pending_backfill")
        .containsEntry("consecutive_failures", 3)
        .containsEntry("last_error", "run " + target[1] + " failed: 2 batches failed")
        .containsEntry("current_run_id", null);
    assertThat(first.get("next_attempt_at")).isNotNull();
    assertThat(again.consecutiveFailures()).isEqualTo(3);
    assertThat(streakColumns(target[0])).isEqualTo(first);
  }

  @Test
  void aFailedRunIsRetriedAtTheNextAttemptAndEachFailedRetryRaisesTheStreak() {
    Targets capped = withCaps(1, 100);
    String[] target = backfillingWithRun("failed", 0);
    long run = Long.parseLong(target[1]);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status,"
            + " error) values (?, 1, dripline_bigint_key(1), dripline_bigint_key(10), 10,"
            + " 'completed', null), (?, 2, dripline_bigint_key(11), dripline_bigint_key(20), 10,"
            + " 'failed', 'boom')",
        run,
        run);
    fixtures.update(
        "update run_key_counts set processed_keys = 10 where run_id = ? and shard = 1", run);
    fixtures.update(
        "update runs set plan_done = true, error = '1 batch failed', backfill = ? where id = ?",
        KeysBackfill.NAME,
        run);
    assertThat(observe(target, 0.5).consecutiveFailures()).isEqualTo(3);
    // Its backoff is over and it takes a slot again.
    fixtures.update(
        "update targets set next_attempt_at = now() - interval '1 second' where name = ?",
        target[0]);
    assertThat(capped.acquireCapacity(new TargetRef(target[0])).acquired()).isTrue();

    PlannedRun retried = capped.plan(new TargetRef(target[0]));

    // R8 retry of its run: the failed batch is pending again, nothing is planned from scratch.
    assertThat(retried.runId()).isEqualTo(run);
    assertThat(fixtures.rows("select id from runs where target_name = ?", target[0])).hasSize(1);
    assertThat(fixtures.row("select status from runs where id = ?", run))
        .containsEntry("status", "running");
    assertThat(fixtures.rows("select status from batches where run_id = ? order by number", run))
        .extracting(row -> row.get("status"))
        .containsExactly("completed", "pending");
    // A retry alone proves nothing: the target is still failing while it runs.
    assertThat(fixtures.targetRow(target[0]))
        .containsEntry("state", "backfilling")
        .containsEntry("current_run_id", run)
        .containsEntry("consecutive_failures", 3);

    // The retried batch fails again: the streak grows, and with it the backoff.
    fixtures.update(
        "update batches set status = 'failed', error = 'boom' where run_id = ? and number = 2",
        run);
    fixtures.update("update runs set status = 'failed' where id = ?", run);
    TargetSnapshot again = observe(target, 0.5);

    assertThat(again.consecutiveFailures()).isEqualTo(4);
    assertThat(again.failing()).isTrue();
    Map<String, Object> row = fixtures.targetRow(target[0]);
    assertThat(
            Duration.between(
                instant(fixtures.row("select now() as now").get("now")),
                instant(row.get("next_attempt_at"))))
        .isBetween(Duration.ofMinutes(4).minusSeconds(5), Duration.ofMinutes(4));
  }

  @Test
  void aBatchThatCompletesAsSoonAsItsRunIsRetriedIsForwardProgress() {
    String[] target = backfillingWithRun("failed", 0);
    long run = Long.parseLong(target[1]);
    fixtures.update(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status,"
            + " error) values (?, 1, dripline_bigint_key(1), dripline_bigint_key(10), 10,"
            + " 'completed', null), (?, 2, dripline_bigint_key(11), dripline_bigint_key(20), 10,"
            + " 'failed', 'boom'), (?, 3, dripline_bigint_key(21), dripline_bigint_key(25), 5,"
            + " 'failed', 'boom')",
        run,
        run,
        run);
    fixtures.update(
        "update run_key_counts set processed_keys = 10 where run_id = ? and shard = 1", run);
    fixtures.update(
        "update runs set plan_done = true, error = '2 batches failed', backfill = ? where id = ?",
        KeysBackfill.NAME,
        run);
    assertThat(observe(target, 0.5).consecutiveFailures()).isEqualTo(3);
    fixtures.update(
        "update targets set next_attempt_at = now() - interval '1 second' where name = ?",
        target[0]);
    // The retried run's batch 2 completes before the retry's answer reaches the target.
    Targets capped =
        withCaps(
            1,
            100,
            retried -> {
              fixtures.update(
                  "update batches set status = 'completed', error = null"
                      + " where run_id = ? and number = 2",
                  retried);
              fixtures.update(
                  "update run_key_counts set processed_keys = 10 where run_id = ? and shard = 2",
                  retried);
            });
    assertThat(capped.acquireCapacity(new TargetRef(target[0])).acquired()).isTrue();
    assertThat(capped.plan(new TargetRef(target[0])).runId()).isEqualTo(run);

    // Batch 3 fails again and the run ends failed.
    fixtures.update(
        "update batches set status = 'failed', error = 'boom' where run_id = ? and number = 3",
        run);
    fixtures.update("update runs set status = 'failed' where id = ?", run);
    TargetSnapshot after = observe(target, 0.5);

    // Batch 2 was forward progress (T4): the old streak ended, and this failure starts a new one.
    assertThat(after.consecutiveFailures()).isEqualTo(FailureStreak.FAILING_THRESHOLD);
    assertThat(fixtures.targetRow(target[0]))
        .containsEntry("consecutive_failures", 3)
        .containsEntry("observed_processed_keys", 20L);
  }

  @Test
  void observeRunStoppedOrDeletedIsNeutral() {
    String[] stopped = backfillingWithRun("stopped", 2);
    String[] deleted = backfillingWithRun("running", 2);
    fixtures.update("delete from runs where id = ?", Long.parseLong(deleted[1]));
    Map<String, Object> stoppedBefore = streakColumns(stopped[0]);
    Map<String, Object> deletedBefore = streakColumns(deleted[0]);

    TargetSnapshot a = observe(stopped, 0.5);
    TargetSnapshot b = observe(deleted, 0.5);

    for (TargetSnapshot s : List.of(a, b)) {
      assertThat(s.state()).isEqualTo(TargetState.PENDING_BACKFILL);
      assertThat(s.consecutiveFailures()).isEqualTo(2);
      assertThat(s.currentRunId()).isNull();
    }
    stoppedBefore.put("state", "pending_backfill");
    stoppedBefore.put("current_run_id", null);
    deletedBefore.put("state", "pending_backfill");
    deletedBefore.put("current_run_id", null);
    assertThat(streakColumns(stopped[0])).isEqualTo(stoppedBefore);
    assertThat(streakColumns(deleted[0])).isEqualTo(deletedBefore);
  }

  @Test
  void observeRunOfAnotherRunChangesNothing() {
    String[] target = backfillingWithRun("failed", 1);
    Map<String, Object> before = streakColumns(target[0]);

    TargetSnapshot after =
        activities.observeRun(
            new RunObservation(target[0], Long.parseLong(target[1]) + 1_000_000, 0.5));

    assertThat(after.state()).isEqualTo(TargetState.BACKFILLING);
    assertThat(streakColumns(target[0])).isEqualTo(before);
  }

  // --- live batches ------------------------------------------------------------------------

  private String primedLiveTarget() {
    return fixtures.target(
        "live",
        LiveBackfill.NAME,
        "{\"tenant\":\"" + TargetFixtures.uniqueName("tenant") + "\"}",
        null,
        "primed");
  }

  @Test
  void applyLiveBatchesAppliesInArrivalOrderUpToMax() {
    String name = primedLiveTarget();
    long first = fixtures.liveBatch(name, "{\"n\":1}");
    long second = fixtures.liveBatch(name, "{\"n\":2}");
    long third = fixtures.liveBatch(name, "{\"n\":3}");

    LiveDrain partial = activities.applyLiveBatches(new LiveDrainRequest(name, 2));
    LiveDrain rest = activities.applyLiveBatches(new LiveDrainRequest(name, 10));

    assertThat(partial.applied()).isEqualTo(2);
    assertThat(partial.remaining()).isEqualTo(1);
    assertThat(rest.applied()).isEqualTo(1);
    assertThat(rest.remaining()).isZero();
    assertThat(liveBackfill.applied(name)).containsExactly(first, second, third);
    assertThat(
            fixtures.rows(
                "select status from live_batches where target_name = ? and applied_at is not null",
                name))
        .hasSize(3);
  }

  @Test
  void applyLiveBatchesWaitsUntilPrimed() {
    String name =
        fixtures.target(
            "live",
            LiveBackfill.NAME,
            "{\"tenant\":\"" + TargetFixtures.uniqueName("tenant") + "\"}",
            null,
            "backfilling");
    fixtures.liveBatch(name, "{\"n\":1}");

    LiveDrain drain = activities.applyLiveBatches(new LiveDrainRequest(name, 10));

    assertThat(drain.applied()).isZero();
    assertThat(drain.remaining()).isEqualTo(1);
    assertThat(liveBackfill.applied(name)).isEmpty();
  }

  @Test
  void aPermanentLiveFailureMarksTheBatchFailedAndTheTargetNeedsResync() {
    String name = primedLiveTarget();
    long first = fixtures.liveBatch(name, "{\"n\":1}");
    long bad = fixtures.liveBatch(name, "{\"n\":\"permanent\"}");
    long after = fixtures.liveBatch(name, "{\"n\":3}");

    LiveDrain drain = activities.applyLiveBatches(new LiveDrainRequest(name, 10));

    assertThat(drain.applied()).isEqualTo(1);
    assertThat(drain.remaining()).isEqualTo(1);
    assertThat(drain.target().state()).isEqualTo(TargetState.NEEDS_RESYNC);
    assertThat(drain.target().failing()).isTrue();
    assertThat(liveBackfill.applied(name)).containsExactly(first);
    assertThat(fixtures.row("select status, error from live_batches where id = ?", bad))
        .containsEntry("status", "failed");
    assertThat(fixtures.row("select status from live_batches where id = ?", after))
        .containsEntry("status", "queued");
    Map<String, Object> row = fixtures.targetRow(name);
    assertThat(row).containsEntry("state", "needs_resync").containsEntry("consecutive_failures", 3);
    assertThat((String) row.get("last_error")).contains("live batch " + bad);
    assertThat(row.get("first_failed_at")).isNotNull();
  }

  @Test
  void aTransientLiveFailureIsRetryableAndKeepsTheBatchQueued() {
    String name = primedLiveTarget();
    long first = fixtures.liveBatch(name, "{\"n\":1}");
    long flaky = fixtures.liveBatch(name, "{\"n\":\"transient\"}");

    assertThatThrownBy(() -> activities.applyLiveBatches(new LiveDrainRequest(name, 10)))
        .satisfies(
            thrown -> {
              assertThat(failure(thrown).getType()).isEqualTo("LIVE_BATCH_FAILED");
              assertThat(failure(thrown).isNonRetryable()).isFalse();
            });
    assertThat(liveBackfill.applied(name)).containsExactly(first);
    assertThat(fixtures.row("select status, error from live_batches where id = ?", flaky))
        .containsEntry("status", "queued")
        .containsEntry("error", "IllegalStateException: sink busy");
    assertThat(fixtures.targetRow(name)).containsEntry("state", "primed");
  }

  // --- replan ------------------------------------------------------------------------------

  @Test
  void replanDryRunReportsAndChangesNothing() {
    String[] target = backfillingWithRun("running", 4);
    Map<String, Object> before = streakColumns(target[0]);

    ReplanResult result = replans.preview(target[0]);

    assertThat(result)
        .isEqualTo(new ReplanResult(true, TargetState.BACKFILLING, 4, Long.parseLong(target[1])));
    assertThat(streakColumns(target[0])).isEqualTo(before);
    assertThat(replans.preview("no-such-target").found()).isFalse();
  }

  @Test
  void replanResetsTheTargetAndReportsOnlyAnActiveRun() {
    String[] running = backfillingWithRun("running", 4);
    String[] ended = backfillingWithRun("failed", 2);

    ReplanResult a = replans.replan(running[0]).result();
    ReplanResult b = replans.replan(ended[0]).result();

    assertThat(a.cancelledRunId()).isEqualTo(Long.parseLong(running[1]));
    assertThat(b.cancelledRunId()).isNull();
    assertThat(streakColumns(running[0]))
        .containsEntry("state", "pending_backfill")
        .containsEntry("consecutive_failures", 0)
        .containsEntry("first_failed_at", null)
        .containsEntry("next_attempt_at", null)
        .containsEntry("last_error", null)
        .containsEntry("current_run_id", null);
  }

  @Test
  void replanActivitySendsTheStopToAPendingRunThatHasNoWorkflow() {
    TestWorkflowEnvironment temporal = TestWorkflowEnvironment.newInstance();
    for (String attribute : List.of("DriplineBackfill", "DriplineRunStatus", "DriplineTarget")) {
      temporal.registerSearchAttribute(attribute, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    try {
      TargetRecordActivitiesImpl withTemporal =
          new TargetRecordActivitiesImpl(
              records,
              runs,
              counters,
              line,
              replans,
              transactions,
              engine,
              targetConfig,
              temporal.getWorkflowClient(),
              temporalConfig,
              wakeups);
      String[] target = backfillingWithRun("pending", 3);

      ReplanResult result = withTemporal.replan(new TargetRef(target[0]));

      assertThat(result.cancelledRunId()).isEqualTo(Long.parseLong(target[1]));
      // Sent with a new execution (signal-with-start), whose workflow records the stop.
      assertThat(
              temporal
                  .getWorkflowClient()
                  .newUntypedWorkflowStub(RunWorkflowIds.forRun(Long.parseLong(target[1])))
                  .describe()
                  .getStatus())
          .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING);
      assertThat(fixtures.row("select status from runs where id = ?", Long.parseLong(target[1])))
          .containsEntry("status", "pending");
      assertThat(fixtures.targetRow(target[0]))
          .containsEntry("state", "pending_backfill")
          .containsEntry("consecutive_failures", 0);
    } finally {
      temporal.close();
    }
  }
}
