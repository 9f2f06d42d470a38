package dev.dripline.workflows.run;

import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An in-memory stand-in for the run and batch tables, with the same compare-and-set semantics as
 * the PostgreSQL activities, plus a probe that counts batches executing at the same moment. It
 * implements all three activity interfaces so a workflow test can register one object.
 */
final class FakeRunStore implements RunActivities, PlanningActivities, BatchActivities {

  static final class Batch {
    final BatchRef ref;
    BatchStatus status = BatchStatus.PENDING;
    Long claimToken;
    String error;
    int executions;

    Batch(BatchRef ref) {
      this.ref = ref;
    }
  }

  // Run configuration, set by the test before starting the workflow.
  long runId = 1;
  String backfill = "test.keys";
  long items;
  int batchSize = 1;
  Long maxRecords;
  Integer requestedCap;
  Integer definitionCap;
  int safetyCap = 200;
  Instant startAt;
  int maxBatchesPerExecution = 1_000;
  int planPageBatches = 100;
  long batchMillis = 20;
  int maxAttempts = 1;
  long endedRunRetryWindowMillis = Duration.ofDays(7).toMillis();

  /** Chain time given to batch activities; chains are simulated as BatchExecution runs them. */
  long chainMillis;

  /** Batch numbers whose processing fails (permanently) while listed. */
  final Set<Integer> failing = new HashSet<>();

  /** Calls of {@link #claimPending} still to fail, as while PostgreSQL is down. */
  int claimFailures;

  /**
   * Calls of {@link #recoverSlots} still to find the slots' holder alive (not provably dead), so
   * they recover nothing.
   */
  int holderAliveFor;

  /**
   * Calls of {@link #claimPending} that found the slots full of batches the caller does not hold.
   */
  int claimsFindingSlotsFull;

  /**
   * What holds the run while not empty (the brake, check names): claims take nothing, as {@code
   * dripline_run_holds} makes them in PostgreSQL, and chains end.
   */
  volatile List<String> holds = List.of();

  /** Claims a hold kept from taking batches. */
  int heldClaims;

  /** Calls of {@link #recoverSlots} so far. */
  int recoverSlotsCalls;

  /** Batch numbers that wait for {@link #release} before finishing. */
  final Map<Integer, CountDownLatch> gates = new HashMap<>();

  /**
   * The call of {@link #loadRun} (1 = the first execution's) that waits for {@link #loadRelease}
   * before answering, as while PostgreSQL does not answer; 0 for none.
   */
  volatile int blockedLoad;

  /** Counted down when the blocked load has begun. */
  final CountDownLatch loadBlocked = new CountDownLatch(1);

  /** Counted down by the test to let the blocked load answer. */
  final CountDownLatch loadRelease = new CountDownLatch(1);

  /**
   * When set, {@link #recordCap} records and then waits for it before answering, as a statement
   * whose commit is slow to be acknowledged; {@link #capWritten} is counted down once it recorded.
   */
  volatile CountDownLatch capRelease;

  final CountDownLatch capWritten = new CountDownLatch(1);

  /** The same for {@link #recordStatus}, with {@link #statusWritten}. */
  volatile CountDownLatch statusRelease;

  final CountDownLatch statusWritten = new CountDownLatch(1);

  // Recorded state.
  RunStatus status = RunStatus.PENDING;
  boolean stopRecorded;

  /** Pending batches planned but not yet claimed, most seen at any planning call. */
  int maxPendingPlanned;

  /** Batches taken by chains rather than by the workflow's claims. */
  int chainedBatches;

  /** Planning calls so far. */
  volatile int planningCalls;

  /** Chains report no chained keys, as a retried attempt after its worker died mid-chain does. */
  boolean chainsForgetTheirKeys;

  boolean exists = true;

  /** Paused before it started (R9): it waits for its resume to start. */
  boolean pausedBeforeStart;

  Long planCursor;
  boolean planDone;
  int nextNumber = 1;
  long plannedKeys;
  Long totalKeys;
  long processedKeys;
  Instant startedAt;
  String error;
  int recordedCap;
  int loads;
  final TreeMap<Integer, Batch> batches = new TreeMap<>();
  final List<Integer> claimOrder = new ArrayList<>();
  final List<RunStatus> statusChanges = new ArrayList<>();

  /** The recorded status each call of {@link #loadRun} found (one per execution). */
  final List<RunStatus> statusAtLoad = new ArrayList<>();

  private int executing;
  private int maxExecuting;

  /** Most batches executing at once since each call of {@link #loadRun} (one per execution). */
  private final List<Integer> maxExecutingSinceLoad = new ArrayList<>();

  synchronized List<Integer> maxExecutingSinceLoad() {
    return List.copyOf(maxExecutingSinceLoad);
  }

  synchronized int maxExecuting() {
    return maxExecuting;
  }

  synchronized int executing() {
    return executing;
  }

  synchronized long count(BatchStatus wanted) {
    return batches.values().stream().filter(b -> b.status == wanted).count();
  }

  synchronized int executions(int number) {
    return batches.get(number).executions;
  }

  void gate(int number) {
    synchronized (this) {
      gates.put(number, new CountDownLatch(1));
    }
  }

  void release(int number) {
    CountDownLatch latch;
    synchronized (this) {
      latch = gates.get(number);
    }
    latch.countDown();
  }

  /**
   * Records batches of one key each as planned already (the plan done), in these statuses: a batch
   * {@code enqueued} or {@code running} holds a slot that no activity holds.
   */
  synchronized void planned(BatchStatus... statuses) {
    for (BatchStatus wanted : statuses) {
      long key = plannedKeys + 1;
      Batch batch = new Batch(new BatchRef(nextNumber++, key, key, 1));
      batch.status = wanted;
      if (wanted.holdsSlot()) {
        batch.claimToken = -1L;
      }
      batches.put(batch.ref.number(), batch);
      plannedKeys++;
      planCursor = key;
    }
    items = plannedKeys;
    planDone = true;
    totalKeys = plannedKeys;
  }

  // RunActivities

  synchronized RunStatus status() {
    return status;
  }

  @Override
  public RunSettings loadRun(RunRef run) {
    int load;
    synchronized (this) {
      load = ++loads;
      maxExecutingSinceLoad.add(executing);
      statusAtLoad.add(status);
    }
    if (load == blockedLoad) {
      loadBlocked.countDown();
      try {
        loadRelease.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return settings(run);
  }

  private synchronized RunSettings settings(RunRef run) {
    if (!exists) {
      return RunSettings.notFound(run.runId());
    }
    return new RunSettings(
        runId,
        true,
        backfill,
        status,
        batchSize,
        requestedCap,
        definitionCap,
        safetyCap,
        startAt,
        started() && startedAt == null ? Instant.EPOCH : startedAt,
        totalKeys,
        processedKeys,
        planDone,
        new BatchPolicy(3_600_000, 3_600_000, maxAttempts, 100, 1_000),
        planPageBatches,
        maxBatchesPerExecution,
        chainMillis,
        stopRecorded,
        endedRunRetryWindowMillis,
        false);
  }

  @Override
  public synchronized StartResult markRunning(RunRef run) {
    if (!exists || status != RunStatus.PENDING) {
      return new StartResult(false, exists ? status : null, startedAt);
    }
    status = RunStatus.RUNNING;
    startedAt = Instant.now();
    statusChanges.add(status);
    return new StartResult(true, status, startedAt);
  }

  @Override
  public synchronized ClaimResult claimPending(ClaimRequest request) {
    if (claimFailures > 0) {
      claimFailures--;
      throw new IllegalStateException("An I/O error occurred while sending to the backend.");
    }
    List<BatchRef> claimed = new ArrayList<>();
    for (Batch batch : batches.values()) {
      if (batch.claimToken != null
          && batch.claimToken == request.token()
          && batch.status.holdsSlot()) {
        claimed.add(batch.ref);
      }
    }
    if (!claimed.isEmpty()) {
      return new ClaimResult(claimed);
    }
    if (!holds.isEmpty()) {
      heldClaims++;
      return new ClaimResult(List.of(), false, holds, 200, 0, 1_000L);
    }
    // As in PostgreSQL (RunActivitiesImpl): at most the cap less the batches holding a slot.
    int holders = (int) batches.values().stream().filter(b -> b.status.holdsSlot()).count();
    int room = CapPolicy.effective(definitionCap, requestedCap, safetyCap) - holders;
    int limit = Math.min(request.limit(), room);
    for (Batch batch : batches.values()) {
      if (claimed.size() >= limit) {
        break;
      }
      if (batch.status == BatchStatus.PENDING) {
        batch.status = BatchStatus.ENQUEUED;
        batch.claimToken = request.token();
        claimed.add(batch.ref);
        claimOrder.add(batch.ref.number());
      }
    }
    if (room < request.limit()) {
      claimsFindingSlotsFull++;
    }
    return new ClaimResult(claimed, room < request.limit() && claimed.size() == Math.max(0, limit));
  }

  @Override
  public synchronized void recordBatchFailure(BatchFailure failure) {
    Batch batch = batches.get(failure.number());
    if (batch.status.holdsSlot()) {
      batch.status = BatchStatus.FAILED;
      batch.error = failure.error();
    }
  }

  @Override
  public synchronized RequeueResult requeue(RequeueRequest request) {
    // The rule BatchRequeue applies in PostgreSQL.
    if (!RetryRule.applies(status, stopRecorded)) {
      return new RequeueResult(0, status);
    }
    List<BatchStatus> from = RetryRule.requeued(status);
    int requeued = 0;
    for (Batch batch : batches.values()) {
      if (from.contains(batch.status)) {
        batch.status = BatchStatus.PENDING;
        batch.error = null;
        batch.claimToken = null;
        requeued++;
      }
    }
    if (RetryRule.reopens(status, requeued, planDone)) {
      status = RunStatus.RUNNING;
      stopRecorded = false;
      statusChanges.add(status);
    }
    return new RequeueResult(requeued, status);
  }

  @Override
  public void recordStatus(StatusChange change) {
    writeStatus(change);
    awaitRelease(statusRelease, statusWritten);
  }

  /** Waits for {@code release}, if set, after counting {@code written} down. */
  private static void awaitRelease(CountDownLatch release, CountDownLatch written) {
    if (release == null) {
      return;
    }
    written.countDown();
    try {
      release.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private synchronized void writeStatus(StatusChange change) {
    // As RunRepository.recordStatus: running or paused once started; pending or paused before.
    boolean started = started();
    List<RunStatus> fits =
        started
            ? List.of(RunStatus.RUNNING, RunStatus.PAUSED)
            : List.of(RunStatus.PENDING, RunStatus.PAUSED);
    if (fits.contains(status) && fits.contains(change.status())) {
      status = change.status();
      pausedBeforeStart = !started && status == RunStatus.PAUSED;
      statusChanges.add(status);
    }
  }

  /**
   * Whether the run has started: a test that sets it running or paused without a start time means
   * one that started, unless it was paused before it started.
   */
  private boolean started() {
    return startedAt != null
        || status == RunStatus.RUNNING
        || (status == RunStatus.PAUSED && !pausedBeforeStart);
  }

  @Override
  public synchronized void recordStopRequested(RunRef run) {
    stopRecorded = true;
  }

  /** The audit trail the workflow wrote, by dedup key: a repeated write records nothing. */
  final Map<String, AuditRecord> audit = new LinkedHashMap<>();

  @Override
  public synchronized void recordAudit(AuditRecord record) {
    audit.putIfAbsent(record.dedupKey(), record);
  }

  /** The audit entries written so far, in order. */
  synchronized List<AuditRecord> audited() {
    return List.copyOf(audit.values());
  }

  @Override
  public void recordCap(CapRecord record) {
    synchronized (this) {
      requestedCap = record.requestedCap();
      recordedCap = record.effectiveCap();
    }
    awaitRelease(capRelease, capWritten);
  }

  @Override
  public synchronized int recoverSlots(RunRef run) {
    recoverSlotsCalls++;
    if (holderAliveFor > 0) {
      holderAliveFor--;
      return 0;
    }
    int recovered = 0;
    for (Batch batch : batches.values()) {
      if (batch.status.holdsSlot()) {
        batch.status = BatchStatus.PENDING;
        batch.claimToken = null;
        recovered++;
      }
    }
    return recovered;
  }

  @Override
  public synchronized FinishResult finish(FinishRequest request) {
    if (!exists) {
      return new FinishResult(true, null, null);
    }
    if (status.isTerminal()) {
      return new FinishResult(true, status, Instant.now(), processedKeys);
    }
    if (request.stopping()) {
      for (Batch batch : batches.values()) {
        if (batch.status == BatchStatus.PENDING) {
          batch.status = BatchStatus.STOPPED;
        }
      }
    }
    long open =
        batches.values().stream()
            .filter(b -> b.status == BatchStatus.PENDING || b.status.holdsSlot())
            .count();
    Optional<RunEnding> ending =
        RunEnding.of(
            request.stopping(), request.error(), planDone, open, count(BatchStatus.FAILED));
    if (ending.isEmpty()) {
      return new FinishResult(false, status, null);
    }
    status = ending.get().status();
    error = ending.get().error();
    if (planDone && totalKeys == null) {
      totalKeys = plannedKeys;
    }
    statusChanges.add(status);
    return new FinishResult(true, status, Instant.now(), processedKeys);
  }

  // PlanningActivities

  @Override
  public synchronized PlanPage planNextPage(PlanRequest request) {
    planningCalls++;
    if (planDone) {
      return new PlanPage(0, true, totalKeys);
    }
    if (request.keepPending() > 0 && pending() >= request.keepPending()) {
      return new PlanPage(0, false, null, pending());
    }
    long limit = maxRecords == null ? items : Math.min(items, maxRecords);
    int created = 0;
    long next = planCursor == null ? 1 : planCursor + 1;
    while (created < request.maxBatches() && next <= limit) {
      long end = Math.min(limit, next + batchSize - 1);
      BatchRef ref = new BatchRef(nextNumber, next, end, (int) (end - next + 1));
      batches.put(nextNumber, new Batch(ref));
      nextNumber++;
      plannedKeys += ref.size();
      planCursor = end;
      next = end + 1;
      created++;
    }
    if (next > limit) {
      planDone = true;
      totalKeys = plannedKeys;
    }
    maxPendingPlanned = Math.max(maxPendingPlanned, pending());
    return request.keepPending() > 0
        ? new PlanPage(created, planDone, planDone ? totalKeys : null, pending())
        : new PlanPage(created, planDone, planDone ? totalKeys : null);
  }

  private int pending() {
    return (int) batches.values().stream().filter(b -> b.status == BatchStatus.PENDING).count();
  }

  // BatchActivities

  @Override
  public BatchResult processBatch(BatchWork work) {
    long deadline = System.currentTimeMillis() + work.chainMillis();
    BatchResult head = execute(work.batch().number());
    if (work.chainMillis() <= 0 || work.lane() < 1 || head.outcome() == BatchOutcome.SKIPPED) {
      return head;
    }
    int chained = 0;
    long chainedKeys = 0;
    while (System.currentTimeMillis() < deadline) {
      Batch next;
      synchronized (this) {
        int cap = CapPolicy.effective(definitionCap, requestedCap, safetyCap);
        if (status != RunStatus.RUNNING || stopRecorded || work.lane() > cap || !holds.isEmpty()) {
          break;
        }
        next =
            batches.values().stream()
                .filter(b -> b.status == BatchStatus.PENDING)
                .findFirst()
                .orElse(null);
        if (next == null) {
          break;
        }
        next.status = BatchStatus.RUNNING;
        chainedBatches++;
      }
      try {
        BatchResult one = execute(next.ref.number());
        chained++;
        chainedKeys += one.size();
      } catch (ApplicationFailure failure) {
        return new BatchResult(
            head.outcome(),
            head.size(),
            chained,
            chainedKeys,
            next.ref,
            failure.getOriginalMessage(),
            true);
      }
    }
    return new BatchResult(
        head.outcome(),
        head.size(),
        chained,
        chainsForgetTheirKeys ? 0 : chainedKeys,
        null,
        null,
        false);
  }

  private BatchResult execute(int number) {
    Batch batch;
    CountDownLatch gate;
    synchronized (this) {
      batch = batches.get(number);
      if (batch.status == BatchStatus.COMPLETED) {
        return new BatchResult(BatchOutcome.ALREADY_COMPLETED, batch.ref.size());
      }
      if (!batch.status.holdsSlot()) {
        return new BatchResult(BatchOutcome.SKIPPED, 0);
      }
      batch.status = BatchStatus.RUNNING;
      batch.executions++;
      executing++;
      maxExecuting = Math.max(maxExecuting, executing);
      int last = maxExecutingSinceLoad.size() - 1;
      if (last >= 0) {
        maxExecutingSinceLoad.set(last, Math.max(maxExecutingSinceLoad.get(last), executing));
      }
      gate = gates.get(batch.ref.number());
    }
    try {
      if (gate != null) {
        gate.await(30, TimeUnit.SECONDS);
      } else if (batchMillis > 0) {
        Thread.sleep(batchMillis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      synchronized (this) {
        executing--;
      }
    }
    synchronized (this) {
      if (failing.contains(batch.ref.number())) {
        throw ApplicationFailure.newNonRetryableFailure(
            "injected failure of batch " + batch.ref.number(),
            DriplineFailure.BATCH_PERMANENT.name());
      }
      batch.status = BatchStatus.COMPLETED;
      processedKeys += batch.ref.size();
      return new BatchResult(BatchOutcome.COMPLETED, batch.ref.size());
    }
  }
}
