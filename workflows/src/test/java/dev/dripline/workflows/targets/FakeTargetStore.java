package dev.dripline.workflows.targets;

import dev.dripline.workflows.run.RunStatus;
import io.temporal.activity.Activity;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * An in-memory stand-in for the targets table, with the compare-and-set semantics of the PostgreSQL
 * activities: every write first checks the state the caller expects and otherwise changes nothing.
 * Every state and streak change goes through {@link TargetTransitions}, so a test of the workflow
 * over this store also exercises the rules the real activities apply. Capacity decisions are
 * serialised by the store's monitor, as the database's transaction serialises them, and the store
 * records the most targets ever backfilling at once, globally and per group. Capacity goes to the
 * eligible targets in the order they became eligible, as in PostgreSQL, and a release of capacity
 * wakes the targets next in line through {@link #waker}. A planning attempt saves at most one run
 * (found again by the target's attempt id), and a target whose run failed retries that run.
 *
 * <p>Time is the test environment's clock, so backoff arithmetic follows the skipped time.
 */
final class FakeTargetStore implements TargetActivities {

  /** What a target's planning attempts do while set. */
  enum PlanMode {
    SUCCEED,
    FAIL,
    PERMANENT,
    /**
     * The next attempt saves its run and then never answers, as when its worker dies right after
     * the commit; later attempts succeed.
     */
    LOSE_COMPLETION_ONCE
  }

  /**
   * What a planned run does as the target observes it.
   *
   * @param pollsBeforeEnd observations before the run ends ({@code Integer.MAX_VALUE}: never)
   * @param endsAs how it ends
   * @param progressOnFirstPoll whether a batch completes before the first observation
   */
  record RunScript(int pollsBeforeEnd, RunStatus endsAs, boolean progressOnFirstPoll) {
    static RunScript completesAfter(int polls) {
      return new RunScript(polls, RunStatus.COMPLETED, false);
    }

    static RunScript failsAfter(int polls) {
      return new RunScript(polls, RunStatus.FAILED, false);
    }

    static RunScript runsForever() {
      return new RunScript(Integer.MAX_VALUE, RunStatus.COMPLETED, false);
    }

    static RunScript progressesThenRunsForever() {
      return new RunScript(Integer.MAX_VALUE, RunStatus.COMPLETED, true);
    }
  }

  /** One recorded change of a target (or a lost capacity race, which must change nothing). */
  record Change(String kind, String target, Instant at, TargetSnapshot after) {}

  /** A queued live batch: its arrival order and time. */
  record LiveBatch(long sequence, Instant queuedAt) {}

  static final class Run {
    final long id;
    final String target;
    final long attempt;
    RunScript script;
    RunStatus status = RunStatus.RUNNING;
    int polls;

    /** Executions: the first, then one per retry (R8). */
    int executions = 1;

    Run(long id, String target, long attempt, RunScript script) {
      this.id = id;
      this.target = target;
      this.attempt = attempt;
      this.script = script;
    }

    boolean active() {
      return status == RunStatus.RUNNING;
    }
  }

  private final Supplier<Instant> clock;
  volatile TargetSettings settings;
  volatile int globalMax = 5;
  volatile int groupMax = 3;

  /** Called inside the store's monitor after every recorded change, to script a scenario. */
  volatile Consumer<Change> onChange = change -> {};

  /**
   * Wakes a target's workflow (outside the store's monitor): called for the targets next in line
   * when capacity is released, as the PostgreSQL activities signal them.
   */
  volatile Consumer<String> waker = name -> {};

  private final Map<String, TargetSnapshot> targets = new LinkedHashMap<>();
  private final Map<String, PlanMode> planModes = new HashMap<>();
  private final Map<String, Deque<RunScript>> runScripts = new HashMap<>();
  private final Map<String, List<Instant>> planAttempts = new HashMap<>();
  private final Map<String, List<Integer>> activityAttempts = new HashMap<>();
  private final Map<String, Deque<LiveBatch>> liveQueues = new HashMap<>();
  private final Map<String, List<Long>> applied = new HashMap<>();
  private final Map<String, Boolean> liveFailing = new HashMap<>();
  private final Map<String, Integer> capacityLosses = new HashMap<>();
  private final Map<String, Instant> waitingSince = new HashMap<>();
  private final Map<String, Long> attemptIds = new HashMap<>();
  private long nextAttemptId = 1;
  final Map<Long, Run> runs = new LinkedHashMap<>();
  private final List<Change> changes = new ArrayList<>();
  private final List<Integer> drainSizes = new ArrayList<>();
  private final CountDownLatch lostCompletionsReleased = new CountDownLatch(1);
  private int lostCompletions;
  private long nextRunId = 100;
  private long nextLiveSequence = 1;
  private int loads;

  /** Calls of {@link #load} still to fail, as while PostgreSQL is down. */
  int loadFailures;

  private int replans;
  private int maxBackfilling;
  private final Map<String, Integer> maxBackfillingPerGroup = new HashMap<>();

  FakeTargetStore(Supplier<Instant> clock, TargetSettings settings) {
    this.clock = clock;
    this.settings = settings;
  }

  // Arrange

  /** Registers a target as the API does: pending_backfill, streak 0 (T1). */
  synchronized void register(String name, String group) {
    put(
        new TargetSnapshot(
            name,
            true,
            "example.copy-events",
            group,
            TargetState.PENDING_BACKFILL,
            0,
            null,
            null,
            null,
            null,
            null,
            0,
            null,
            settings));
  }

  /** Stores a record as it is, e.g. one left behind by a crash. */
  synchronized void put(TargetSnapshot record) {
    targets.put(record.name(), record);
    waitingSince.put(record.name(), clock.get());
    track();
  }

  /** A run recorded for a target, as a previous execution would have left it. */
  synchronized long existingRun(String target, RunScript script) {
    long id = nextRunId++;
    runs.put(id, new Run(id, target, 0, script));
    return id;
  }

  synchronized void planMode(String name, PlanMode mode) {
    planModes.put(name, mode);
  }

  /**
   * Scripts for the target's next run executions — a new run, or a retry of its failed run — in
   * order; the last one repeats.
   */
  synchronized void runScripts(String name, RunScript... scripts) {
    runScripts.put(name, new ArrayDeque<>(List.of(scripts)));
  }

  synchronized void queueLive(String name, int count) {
    Deque<LiveBatch> queue = liveQueues.computeIfAbsent(name, k -> new ArrayDeque<>());
    for (int i = 0; i < count; i++) {
      queue.add(new LiveBatch(nextLiveSequence++, clock.get()));
    }
  }

  synchronized void liveFailing(String name, boolean failing) {
    liveFailing.put(name, failing);
  }

  synchronized void delete(String name) {
    targets.remove(name);
  }

  /** The API's replan (T7) done directly on the record, as the HTTP endpoint would. */
  void replanAsApi(String name) {
    replan(new TargetRef(name));
  }

  // Assert

  synchronized TargetSnapshot get(String name) {
    TargetSnapshot t = targets.get(name);
    return t == null ? TargetSnapshot.notFound(name) : decorate(t);
  }

  synchronized List<Instant> planAttempts(String name) {
    return List.copyOf(planAttempts.getOrDefault(name, List.of()));
  }

  /**
   * Temporal's attempt number of each planning call of the target (1 for a call that is not a
   * retry), in call order.
   */
  synchronized List<Integer> activityAttempts(String name) {
    return List.copyOf(activityAttempts.getOrDefault(name, List.of()));
  }

  synchronized List<Change> changes(String name, String kind) {
    return changes.stream().filter(c -> c.target().equals(name) && c.kind().equals(kind)).toList();
  }

  synchronized List<Change> changes(String name) {
    return changes.stream().filter(c -> c.target().equals(name)).toList();
  }

  synchronized int capacityLosses(String name) {
    return capacityLosses.getOrDefault(name, 0);
  }

  synchronized int loads() {
    return loads;
  }

  synchronized int replans() {
    return replans;
  }

  synchronized int maxBackfilling() {
    return maxBackfilling;
  }

  synchronized Map<String, Integer> maxBackfillingPerGroup() {
    return Map.copyOf(maxBackfillingPerGroup);
  }

  synchronized int appliedLive(String name) {
    return applied.getOrDefault(name, List.of()).size();
  }

  /** Sequence numbers of the target's live batches in the order they were applied. */
  synchronized List<Long> appliedOrder(String name) {
    return List.copyOf(applied.getOrDefault(name, List.of()));
  }

  synchronized List<Integer> drainSizes() {
    return List.copyOf(drainSizes);
  }

  synchronized boolean allInState(TargetState state) {
    return targets.values().stream().allMatch(t -> t.state() == state);
  }

  // TargetActivities

  @Override
  public synchronized TargetSnapshot load(TargetRef target) {
    if (loadFailures > 0) {
      loadFailures--;
      throw new IllegalStateException("An I/O error occurred while sending to the backend.");
    }
    loads++;
    return get(target.name());
  }

  @Override
  public synchronized CapacityResult acquireCapacity(TargetRef target) {
    TargetSnapshot t = targets.get(target.name());
    if (t == null) {
      return new CapacityResult(false, TargetSnapshot.notFound(target.name()));
    }
    Instant now = clock.get();
    if (t.state() == TargetState.BACKFILLING) {
      return new CapacityResult(true, decorate(t));
    }
    if (t.state() != TargetState.PENDING_BACKFILL
        || (t.nextAttemptAt() != null && t.nextAttemptAt().isAfter(now))) {
      return new CapacityResult(false, decorate(t));
    }
    if (!firstInLine(t, now)) {
      capacityLosses.merge(t.name(), 1, Integer::sum);
      return new CapacityResult(false, save("capacity-lost", TargetTransitions.neutral(t), now));
    }
    attemptIds.put(t.name(), nextAttemptId++);
    return new CapacityResult(true, save("backfilling", TargetTransitions.backfilling(t), now));
  }

  /** When a pending target became eligible: its place in the line for capacity (T1). */
  private Instant placeInLine(TargetSnapshot t) {
    Instant since = waitingSince.getOrDefault(t.name(), Instant.EPOCH);
    return t.nextAttemptAt() != null && t.nextAttemptAt().isAfter(since)
        ? t.nextAttemptAt()
        : since;
  }

  private final Comparator<TargetSnapshot> line =
      Comparator.comparing(this::placeInLine).thenComparing(TargetSnapshot::name);

  /**
   * Whether capacity is free for {@code me} once every eligible target ahead of it in line has
   * taken what it can: the same walk as the PostgreSQL activities'.
   */
  private boolean firstInLine(TargetSnapshot me, Instant now) {
    List<TargetSnapshot> ahead =
        targets.values().stream()
            .filter(t -> t.state() == TargetState.PENDING_BACKFILL && !t.name().equals(me.name()))
            .filter(t -> !placeInLine(t).isAfter(now) && line.compare(t, me) < 0)
            .sorted(line)
            .toList();
    return servedFrom(ahead, me).contains(me.name());
  }

  /**
   * Targets of {@code line} (then {@code last}, if given) served by the free capacity, in order.
   */
  private List<String> servedFrom(List<TargetSnapshot> waiting, TargetSnapshot last) {
    long free = globalMax - countBackfilling(null);
    Map<String, Long> groupFree = new HashMap<>();
    List<TargetSnapshot> all = new ArrayList<>(waiting);
    if (last != null) {
      all.add(last);
    }
    List<String> served = new ArrayList<>();
    for (TargetSnapshot t : all) {
      if (free <= 0) {
        break;
      }
      if (t.group() != null) {
        long left = groupFree.computeIfAbsent(t.group(), g -> groupMax - countBackfilling(g));
        if (left <= 0) {
          continue;
        }
        groupFree.put(t.group(), left - 1);
      }
      free--;
      served.add(t.name());
    }
    return served;
  }

  /** The eligible targets that free capacity would serve now, head of the line first. */
  private List<String> nextInLine() {
    Instant now = clock.get();
    return servedFrom(
        targets.values().stream()
            .filter(t -> t.state() == TargetState.PENDING_BACKFILL)
            .filter(t -> !placeInLine(t).isAfter(now))
            .sorted(line)
            .toList(),
        null);
  }

  /** Wakes the targets next in line, outside the monitor (a released slot, T1). */
  private void wakeNextInLine(boolean released) {
    if (!released) {
      return;
    }
    List<String> next;
    synchronized (this) {
      next = nextInLine();
    }
    next.forEach(waker);
  }

  /**
   * As the PostgreSQL activities: capacity, then {@link #plan}; a declared planning failure is
   * recorded here, only while the target holds this attempt's slot, and raised again with the
   * recorded backoff as its next-retry delay.
   */
  @Override
  public PlanningAttempt attemptPlanning(TargetRef target) {
    synchronized (this) {
      activityAttempts
          .computeIfAbsent(target.name(), k -> new ArrayList<>())
          .add(Activity.getExecutionContext().getInfo().getAttempt());
    }
    CapacityResult capacity = acquireCapacity(target);
    if (!capacity.acquired()) {
      return PlanningAttempt.noCapacity(capacity.target());
    }
    Long attempt;
    synchronized (this) {
      attempt = attemptIds.get(target.name());
    }
    PlannedRun run;
    try {
      run = plan(target);
    } catch (ApplicationFailure failure) {
      boolean permanent = TargetFailure.TARGET_PLANNING_PERMANENT.name().equals(failure.getType());
      if (!permanent && !TargetFailure.TARGET_PLANNING_FAILED.name().equals(failure.getType())) {
        throw failure;
      }
      TargetSnapshot after =
          recordUnderLock(
              new PlanningFailure(
                  target.name(),
                  failure.getOriginalMessage(),
                  permanent,
                  ThreadLocalRandom.current().nextDouble()),
              attempt);
      if (after == null) {
        throw ApplicationFailure.newNonRetryableFailureWithCause(
            "superseded", TargetFailure.TARGET_SUPERSEDED.name(), failure);
      }
      wakeNextInLine(true);
      if (permanent) {
        throw failure;
      }
      // The workflow waits for the retries: a wake makes it reload (status, current details).
      waker.accept(target.name());
      throw ApplicationFailure.newFailureWithCauseAndDelay(
          failure.getOriginalMessage(),
          TargetFailure.TARGET_PLANNING_FAILED.name(),
          failure,
          Duration.between(after.lastAttemptAt(), after.nextAttemptAt()));
    }
    return new PlanningAttempt(run, get(target.name()));
  }

  /**
   * Records a planning failure if the target still holds the slot of {@code attempt}, else null.
   */
  private synchronized TargetSnapshot recordUnderLock(PlanningFailure failure, Long attempt) {
    TargetSnapshot t = targets.get(failure.name());
    if (t == null
        || t.state() != TargetState.BACKFILLING
        || !Objects.equals(attempt, attemptIds.get(failure.name()))) {
      return null;
    }
    return recordPlanningFailureUnderLock(failure);
  }

  @Override
  public PlannedRun plan(TargetRef target) {
    PlannedRun planned = planUnderLock(target);
    if (planned == null) {
      // The attempt's run is saved; its answer never arrives (the worker died). The thread waits
      // until the test ends, so the engine has to time the attempt out.
      try {
        lostCompletionsReleased.await(10, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("worker died after saving the run");
    }
    return planned;
  }

  /** Lets the threads of attempts whose answer was lost end (call when the test is over). */
  void releaseLostCompletions() {
    lostCompletionsReleased.countDown();
  }

  synchronized int lostCompletions() {
    return lostCompletions;
  }

  private PlannedRun planUnderLock(TargetRef target) {
    synchronized (this) {
      TargetSnapshot t = targets.get(target.name());
      if (t == null) {
        throw ApplicationFailure.newNonRetryableFailure(
            "target " + target.name() + " no longer exists",
            TargetFailure.TARGET_PLANNING_FAILED.name());
      }
      Instant now = clock.get();
      List<Instant> attempts = planAttempts.computeIfAbsent(t.name(), k -> new ArrayList<>());
      attempts.add(now);
      if (t.state() != TargetState.BACKFILLING) {
        throw ApplicationFailure.newNonRetryableFailure(
            "target " + t.name() + " is not backfilling", TargetFailure.TARGET_SUPERSEDED.name());
      }
      // A repeated call of this attempt (its answer was lost) finds the run the first one saved.
      Long attempt = attemptIds.get(t.name());
      for (Run run : runs.values()) {
        if (run.target.equals(t.name()) && attempt != null && run.attempt == attempt) {
          return plannedRun(t, run.id);
        }
      }
      if (t.currentRunId() != null && runs.containsKey(t.currentRunId())) {
        if (runs.get(t.currentRunId()).active()) {
          return plannedRun(t, t.currentRunId());
        }
      }
      if (t.retryRunId() != null && runs.containsKey(t.retryRunId())) {
        // After a run failure: retry that run's failed batches (R8), no new plan.
        Run run = runs.get(t.retryRunId());
        run.status = RunStatus.RUNNING;
        run.polls = 0;
        run.executions++;
        run.script = nextScript(t.name());
        save("retried", TargetTransitions.retried(t, run.id, now), now);
        return plannedRun(t, run.id);
      }
      PlanMode mode = planModes.getOrDefault(t.name(), PlanMode.SUCCEED);
      if (mode == PlanMode.FAIL) {
        throw ApplicationFailure.newFailure(
            "injected planning failure " + attempts.size(),
            TargetFailure.TARGET_PLANNING_FAILED.name());
      }
      if (mode == PlanMode.PERMANENT) {
        throw ApplicationFailure.newNonRetryableFailure(
            "unknown option 'tenant'", TargetFailure.TARGET_PLANNING_PERMANENT.name());
      }
      long runId = nextRunId++;
      runs.put(
          runId, new Run(runId, t.name(), attempt == null ? 0 : attempt, nextScript(t.name())));
      // After planning failures a plan saved is forward progress (T4): the streak resets.
      save("planned", TargetTransitions.planned(t, runId, now), now);
      if (mode == PlanMode.LOSE_COMPLETION_ONCE) {
        planModes.put(t.name(), PlanMode.SUCCEED);
        lostCompletions++;
        return null;
      }
      return plannedRun(t, runId);
    }
  }

  private static PlannedRun plannedRun(TargetSnapshot t, long runId) {
    return new PlannedRun(runId, t.backfill(), t.backfill() + " for target " + t.name());
  }

  private RunScript nextScript(String name) {
    Deque<RunScript> scripts = runScripts.get(name);
    if (scripts == null || scripts.isEmpty()) {
      return RunScript.completesAfter(1);
    }
    return scripts.size() > 1 ? scripts.poll() : scripts.peek();
  }

  @Override
  public TargetSnapshot recordPlanningFailure(PlanningFailure failure) {
    TargetSnapshot after = recordPlanningFailureUnderLock(failure);
    wakeNextInLine(after.found() && after.state() != TargetState.BACKFILLING);
    return after;
  }

  private synchronized TargetSnapshot recordPlanningFailureUnderLock(PlanningFailure failure) {
    TargetSnapshot t = targets.get(failure.name());
    if (t == null) {
      return TargetSnapshot.notFound(failure.name());
    }
    // As in PostgreSQL: applied to any backfilling target, whether or not a run was saved.
    if (t.state() != TargetState.BACKFILLING) {
      return decorate(t);
    }
    Instant now = clock.get();
    return save(
        failure.permanent() ? "planning-failed-permanently" : "planning-failed",
        TargetTransitions.planningFailed(
            t, failure.error(), failure.permanent(), failure.jitterDraw(), now),
        now);
  }

  @Override
  public TargetSnapshot observeRun(RunObservation observation) {
    TargetSnapshot[] before = new TargetSnapshot[1];
    TargetSnapshot after = observeRunUnderLock(observation, before);
    wakeNextInLine(
        before[0] != null
            && before[0].state() == TargetState.BACKFILLING
            && after.state() != TargetState.BACKFILLING);
    return after;
  }

  private synchronized TargetSnapshot observeRunUnderLock(
      RunObservation observation, TargetSnapshot[] before) {
    TargetSnapshot t = targets.get(observation.name());
    if (t == null) {
      return TargetSnapshot.notFound(observation.name());
    }
    before[0] = t;
    if (t.state() != TargetState.BACKFILLING
        || !Long.valueOf(observation.runId()).equals(t.currentRunId())) {
      return decorate(t);
    }
    Instant now = clock.get();
    Run run = runs.get(observation.runId());
    if (run == null) {
      return save("run-gone", TargetTransitions.neutral(t), now);
    }
    run.polls++;
    boolean progressed = run.script.progressOnFirstPoll() && run.polls == 1;
    if (run.status == RunStatus.RUNNING && run.polls >= run.script.pollsBeforeEnd()) {
      run.status = run.script.endsAs();
    }
    // A batch completed before the run ended: forward progress, then the ending (T4, T5).
    TargetSnapshot base = progressed ? TargetTransitions.progressed(t) : t;
    return switch (run.status) {
      case COMPLETED -> save("primed", TargetTransitions.primed(base), now);
      case FAILED ->
          save(
              "run-failed",
              TargetTransitions.runFailed(
                  base, "run " + run.id + " failed", observation.jitterDraw(), now),
              now);
      case STOPPED -> save("run-superseded", TargetTransitions.neutral(base), now);
      default -> progressed ? save("progressed", base, now) : decorate(t);
    };
  }

  @Override
  public synchronized LiveDrain applyLiveBatches(LiveDrainRequest request) {
    TargetSnapshot t = targets.get(request.name());
    if (t == null) {
      return new LiveDrain(0, 0, TargetSnapshot.notFound(request.name()));
    }
    Deque<LiveBatch> queue = liveQueues.computeIfAbsent(t.name(), k -> new ArrayDeque<>());
    if (t.state() != TargetState.PRIMED) {
      return new LiveDrain(0, queue.size(), decorate(t));
    }
    Instant now = clock.get();
    if (liveFailing.getOrDefault(t.name(), false)) {
      return new LiveDrain(
          0,
          queue.size(),
          save(
              "live-failed",
              TargetTransitions.liveFailed(t, "live batch failed permanently", now),
              now));
    }
    List<Long> done = applied.computeIfAbsent(t.name(), k -> new ArrayList<>());
    int count = 0;
    while (count < request.max() && !queue.isEmpty()) {
      done.add(queue.poll().sequence());
      count++;
    }
    drainSizes.add(count);
    return new LiveDrain(count, queue.size(), decorate(t));
  }

  @Override
  public ReplanResult replan(TargetRef target) {
    ReplanResult result = replanUnderLock(target);
    wakeNextInLine(result.previousState() == TargetState.BACKFILLING);
    return result;
  }

  private synchronized ReplanResult replanUnderLock(TargetRef target) {
    TargetSnapshot t = targets.get(target.name());
    if (t == null) {
      return new ReplanResult(false, null, 0, null);
    }
    replans++;
    Long current = t.currentRunId();
    Long cancelled =
        current != null && runs.containsKey(current) && runs.get(current).active() ? current : null;
    // Every active run of the target ends stopped in its record (T7).
    for (Run run : runs.values()) {
      if (run.target.equals(t.name()) && run.active()) {
        run.status = RunStatus.STOPPED;
      }
    }
    save("replanned", TargetTransitions.replanned(t), clock.get());
    return new ReplanResult(true, t.state(), t.consecutiveFailures(), cancelled);
  }

  // Internals

  private TargetSnapshot save(String kind, TargetSnapshot next, Instant at) {
    TargetSnapshot previous = targets.get(next.name());
    if (next.state() == TargetState.PENDING_BACKFILL
        && (previous == null || previous.state() != TargetState.PENDING_BACKFILL)) {
      waitingSince.put(next.name(), at);
    }
    targets.put(next.name(), next);
    track();
    TargetSnapshot view = decorate(next);
    Change change = new Change(kind, next.name(), at, view);
    changes.add(change);
    onChange.accept(change);
    return view;
  }

  private void track() {
    maxBackfilling = (int) Math.max(maxBackfilling, countBackfilling(null));
    for (TargetSnapshot t : targets.values()) {
      if (t.group() != null) {
        maxBackfillingPerGroup.merge(t.group(), (int) countBackfilling(t.group()), Math::max);
      }
    }
  }

  private long countBackfilling(String group) {
    return targets.values().stream()
        .filter(t -> t.state() == TargetState.BACKFILLING)
        .filter(t -> group == null || group.equals(t.group()))
        .count();
  }

  /** Adds the backlog (a join in the real query) and the engine's current settings. */
  private TargetSnapshot decorate(TargetSnapshot t) {
    Deque<LiveBatch> queue = liveQueues.getOrDefault(t.name(), new ArrayDeque<>());
    return new TargetSnapshot(
        t.name(),
        t.found(),
        t.backfill(),
        t.group(),
        t.state(),
        t.consecutiveFailures(),
        t.firstFailedAt(),
        t.lastError(),
        t.lastAttemptAt(),
        t.nextAttemptAt(),
        t.currentRunId(),
        queue.size(),
        queue.isEmpty() ? null : queue.peek().queuedAt(),
        settings,
        t.retryRunId());
  }
}
