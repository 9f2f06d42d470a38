package dev.dripline.activities.run;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.DatabaseOutage;
import dev.dripline.store.keys.KeyCodec;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.store.run.PlanCursor;
import dev.dripline.store.run.RecentBatches;
import dev.dripline.store.run.RunRepository;
import dev.dripline.workflows.run.BatchPolicy;
import dev.dripline.workflows.run.DriplineFailure;
import dev.dripline.workflows.run.PlanPage;
import dev.dripline.workflows.run.PlanRequest;
import dev.dripline.workflows.run.PlanningActivities;
import dev.dripline.workflows.run.RunStatus;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.RandomAccess;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PlanningActivities} on PostgreSQL: asks the definition for the next keys after the run's
 * persisted cursor and cuts them into batches.
 *
 * <p>Invariants: batches and the cursor are saved in one transaction, guarded by a compare-and-set
 * on {@code next_batch_number}, so a retried or concurrent call never duplicates or skips a batch;
 * batches cover the planned keys exactly, in ascending order, each of at most {@code batchSize}
 * keys (for a tuned run, P4, the size chosen for its page), and only the last batch of a run may be
 * smaller; at most one page of keys (bounded by {@link #MAX_KEYS_PER_PAGE} unless a single batch is
 * larger) is held in memory.
 *
 * <p>One call plans the batches it is asked for in pages of at most {@link #MAX_KEYS_PER_PAGE}
 * keys, each saved in its own transaction (so chains may take a page's batches while the next is
 * planned), and returns early when the scope is exhausted, the run's window of pending batches is
 * full, the run stops running or is being stopped, or {@link #CALL_MILLIS} have passed: every call
 * costs the run's workflow a round trip through Temporal, and a call that runs on for long holds up
 * a stop and leaves the workflow without the reports that size its window.
 *
 * <p>The run's cursor is {@link RunRepository}'s, the batches {@link BatchRepository}'s; a page's
 * save is one transaction of both ({@link DataTransactions}).
 *
 * <p>A call that loses its connection to PostgreSQL ({@link DatabaseOutage}) waits for it to answer
 * (up to {@code database-outage-wait}) and plans again from the persisted cursor, which the
 * compare-and-set makes safe, instead of failing the run's planning on an outage.
 *
 * <p>Run by Temporal, a call heartbeats from a background ticker (the workflow gives planning the
 * batches' heartbeat timeout), so a call whose worker was killed is retried within seconds rather
 * than after its whole start-to-close timeout, during which the run would stall. Temporal retries a
 * call without limit; the call counts its failed attempts itself, in its heartbeat details (which
 * Temporal hands to the next attempt, and which the SDK sends with a failure), so only attempts
 * that failed spend the policy's attempts, never one whose worker died ({@link BatchPolicy}).
 *
 * <p>A call on a worker that does not host the run's definition spends none of them either: it
 * fails retryably until the call has waited {@code unknown-backfill-wait} for a worker that does
 * ({@link DefinitionWait}).
 */
@Singleton
public class PlanningActivitiesImpl implements PlanningActivities {
  /** Keys requested from a definition per call, unless one batch alone is larger. */
  static final int MAX_KEYS_PER_PAGE = 100_000;

  /** A call plans no further page once this long has passed since it began. */
  static final long CALL_MILLIS = 1_000;

  private static final Logger LOG = LoggerFactory.getLogger(PlanningActivitiesImpl.class);

  private final Database database;
  private final RunRepository runs;
  private final BatchRepository batchStore;
  private final DataTransactions transactions;
  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;
  private final Duration outageWait;
  private final BatchPolicy policy;
  private final long callNanos;
  private final HeartbeatTicker ticker;
  private final DefinitionWait definitionWait;

  @Inject
  public PlanningActivitiesImpl(
      Database database,
      RunRepository runs,
      BatchRepository batches,
      DataTransactions transactions,
      BackfillRegistry registry,
      RunOptionsReader optionsReader,
      EngineConfig engine,
      HeartbeatTicker ticker) {
    this(
        database,
        runs,
        batches,
        transactions,
        registry,
        optionsReader,
        engine,
        ticker,
        Duration.ofMillis(CALL_MILLIS));
  }

  /** With a call's time other than {@link #CALL_MILLIS} (tests). */
  PlanningActivitiesImpl(
      Database database,
      RunRepository runs,
      BatchRepository batches,
      DataTransactions transactions,
      BackfillRegistry registry,
      RunOptionsReader optionsReader,
      EngineConfig engine,
      HeartbeatTicker ticker,
      Duration callTime) {
    this.database = database;
    this.runs = runs;
    this.batchStore = batches;
    this.transactions = transactions;
    this.registry = registry;
    this.optionsReader = optionsReader;
    this.outageWait = engine.databaseOutageWait();
    this.policy = engine.batchPolicy();
    this.ticker = ticker;
    this.callNanos = callTime.toNanos();
    this.definitionWait = new DefinitionWait(engine.unknownBackfillWait());
  }

  /** The planning state of a run as read before asking the definition. */
  private record Cursor(
      String backfill,
      String options,
      RunStatus status,
      boolean stopRequested,
      int batchSize,
      Long maxRecords,
      Key afterKey,
      boolean done,
      int nextBatchNumber,
      long plannedKeys,
      Long totalKeys,
      BatchTuning tuning,
      Integer currentBatchSize) {}

  @Override
  public PlanPage planNextPage(PlanRequest request) {
    ActivityExecutionContext context = activityContext();
    if (context == null) {
      try {
        return planPages(request); // called directly (tests): no attempts to count
      } catch (DefinitionWait.NotHosted e) {
        Instant now = Instant.now();
        throw definitionWait.notHosted(e.backfill(), now, now);
      }
    }
    AtomicInteger failedAttempts =
        new AtomicInteger(context.getHeartbeatDetails(Integer.class).orElse(0));
    ScheduledFuture<?> heartbeat = heartbeat(context, failedAttempts, request);
    try {
      return planPages(request);
    } catch (DefinitionWait.NotHosted e) {
      throw waitForHost(context, failedAttempts, e.backfill());
    } catch (RuntimeException e) {
      throw counted(context, failedAttempts, e);
    } finally {
      heartbeat.cancel(false);
    }
  }

  /** The context of the Temporal activity this thread runs; null when called directly (tests). */
  private static ActivityExecutionContext activityContext() {
    try {
      return Activity.getExecutionContext();
    } catch (IllegalStateException notInAnActivity) {
      return null;
    }
  }

  /** Heartbeats, with the call's failed attempts as details, while the call runs. */
  private ScheduledFuture<?> heartbeat(
      ActivityExecutionContext context, AtomicInteger failedAttempts, PlanRequest request) {
    long every = BatchActivitiesImpl.tickMillis(context.getInfo().getHeartbeatTimeout());
    return ticker.every(
        every,
        () -> {
          try {
            context.heartbeat(failedAttempts.get());
          } catch (RuntimeException e) {
            LOG.debug("Heartbeat of planning run {} failed: {}", request.runId(), e.toString());
          }
        });
  }

  /**
   * The failure of an attempt on a worker that does not host the run's definition ({@link
   * DefinitionWait}); it spends none of the call's attempts, whose count it heartbeats unchanged. A
   * planning call is short, so the task's wait counts from the call's first scheduling.
   */
  private ApplicationFailure waitForHost(
      ActivityExecutionContext context, AtomicInteger failedAttempts, String backfill) {
    try {
      context.heartbeat(failedAttempts.get());
    } catch (RuntimeException e) {
      LOG.debug("Heartbeat of a planning call waiting for {} failed: {}", backfill, e.toString());
    }
    Instant since = Instant.ofEpochMilli(context.getInfo().getScheduledTimestamp());
    return definitionWait.notHosted(backfill, since, Instant.now());
  }

  /**
   * A failed attempt of the call, counted: non-retryable failures as they are; any other is this
   * call's next failed attempt, non-retryable once the policy allows no more, else retried after
   * the policy's backoff. The count goes into the heartbeat details the SDK sends with the failure.
   */
  private RuntimeException counted(
      ActivityExecutionContext context, AtomicInteger failedAttempts, RuntimeException e) {
    if (e instanceof ApplicationFailure failure && failure.isNonRetryable()) {
      return e;
    }
    int failed = failedAttempts.incrementAndGet();
    try {
      context.heartbeat(failed);
    } catch (RuntimeException heartbeatFailure) {
      e.addSuppressed(heartbeatFailure);
    }
    String message = e instanceof ApplicationFailure f ? f.getOriginalMessage() : ErrorText.of(e);
    String type =
        e instanceof ApplicationFailure f ? f.getType() : DriplineFailure.PLANNING_FAILED.name();
    Throwable cause = e instanceof ApplicationFailure && e.getCause() != null ? e.getCause() : e;
    if (policy.exhaustedBy(failed)) {
      return ApplicationFailure.newNonRetryableFailureWithCause(message, type, cause);
    }
    return ApplicationFailure.newFailureWithCauseAndDelay(
        message, type, cause, policy.retryDelay(failed));
  }

  /**
   * What one page of a call did: the page, and whether the call may plan another (the page was
   * saved and the scope not exhausted — so the page was full —, the run is running and not being
   * stopped, its window not full).
   */
  private record Planned(PlanPage page, boolean mayGoOn) {}

  /** Plans pages until the request is met or one of the class's reasons to return holds. */
  private PlanPage planPages(PlanRequest request) {
    long deadline = System.nanoTime() + callNanos;
    int created = 0;
    while (true) {
      // Only the first page counts the window first: a later one follows a full page (created > 0)
      // whose count said the window was not full.
      Planned planned =
          planThroughOutages(
              new PlanRequest(
                  request.runId(), request.maxBatches() - created, request.keepPending()),
              created == 0);
      PlanPage page = planned.page();
      created += page.batchesCreated();
      if (!planned.mayGoOn()
          || created >= request.maxBatches()
          || System.nanoTime() - deadline >= 0) {
        return new PlanPage(created, page.done(), page.totalKeys(), page.pendingBatches());
      }
    }
  }

  /**
   * {@link #planOnce}, again from the persisted cursor while PostgreSQL cannot be reached. {@code
   * checkWindow}: the call's first page, which counts the pending batches first (a later page of a
   * call knows them from the page before) and takes a tuned run's next step.
   */
  private Planned planThroughOutages(PlanRequest request, boolean checkWindow) {
    while (true) {
      try {
        return planOnce(request, checkWindow);
      } catch (RuntimeException e) {
        if (!DatabaseOutage.isConnectionFailure(e)) {
          throw e;
        }
        LOG.warn(
            "Planning run {} lost PostgreSQL: {}; waiting up to {} for it to answer",
            request.runId(),
            e.toString(),
            outageWait);
        if (!database.awaitAvailable(outageWait, () -> true)) {
          throw e;
        }
      }
    }
  }

  private Planned planOnce(PlanRequest request, boolean checkWindow) {
    Cursor cursor = read(request.runId());
    if (cursor == null) {
      // Deleted: there is nothing left to plan.
      return new Planned(new PlanPage(0, true, null), false);
    }
    if (cursor.done() || cursor.status().isTerminal()) {
      return new Planned(new PlanPage(0, cursor.done(), cursor.totalKeys()), false);
    }
    if (checkWindow && request.keepPending() > 0) {
      int pending = pending(request);
      if (pending >= request.keepPending()) {
        // Enough is ready for the run's slots; plan when it runs low.
        return new Planned(new PlanPage(0, false, null, pending), false);
      }
    }
    KeyedBackfill definition =
        registry
            .find(cursor.backfill())
            .orElseThrow(() -> new DefinitionWait.NotHosted(cursor.backfill()));

    Long remaining =
        cursor.maxRecords() == null ? null : cursor.maxRecords() - cursor.plannedKeys();
    // A windowed definition's batches are one window each: nothing to tune.
    Integer tunedSize =
        definition instanceof KeyedBackfill.Windows
            ? null
            : tunedBatchSize(request, cursor, checkWindow);
    Page page =
        definition instanceof KeyedBackfill.Windows windows
            ? windowsPage(windows, request, cursor, remaining)
            : keysPage(
                definition,
                request,
                cursor,
                remaining,
                tunedSize == null ? cursor.batchSize() : tunedSize);
    boolean done = page.done();
    List<PlannedBatch> batches = page.batches();
    int keysPlanned = batches.stream().mapToInt(PlannedBatch::size).sum();

    Key newAfterKey =
        batches.isEmpty() ? cursor.afterKey() : batches.get(batches.size() - 1).endKey();
    long plannedKeys = cursor.plannedKeys() + keysPlanned;
    Long totalKeys = done ? plannedKeys : null;
    int nextBatchNumber = cursor.nextBatchNumber() + batches.size();

    boolean saved =
        transactions.inTransaction(
            connection -> {
              // Cursor first: its row lock makes a racing attempt wait, then match no row.
              if (runs.advancePlan(
                      request.runId(),
                      cursor.nextBatchNumber(),
                      newAfterKey == null ? null : KeyCodec.encode(newAfterKey),
                      nextBatchNumber,
                      plannedKeys,
                      done,
                      totalKeys,
                      tunedSize)
                  != 1) {
                return false;
              }
              insert(request.runId(), batches);
              return true;
            });
    if (!saved) {
      // Another attempt planned this page first (or the run ended): report what it recorded.
      Cursor now = read(request.runId());
      return new Planned(
          now == null
              ? new PlanPage(0, true, null)
              : new PlanPage(0, now.done() || now.status().isTerminal(), now.totalKeys()),
          false);
    }
    boolean mayGoOn = !done && cursor.status() == RunStatus.RUNNING && !cursor.stopRequested();
    if (request.keepPending() > 0) {
      int pending = pending(request);
      return new Planned(
          new PlanPage(batches.size(), done, totalKeys, pending),
          mayGoOn && pending < request.keepPending());
    }
    return new Planned(new PlanPage(batches.size(), done, totalKeys), mayGoOn);
  }

  /**
   * The size this page's batches are cut to if the run is tuned (P4), else {@code null}: on a
   * call's first page the next step from the size its last page was cut to, by the moving average
   * of its last completed batches (a bounded read: {@link BatchRepository#recentBatches}); on a
   * later page of the same call that size again, since no batch was measured at it yet.
   */
  private Integer tunedBatchSize(PlanRequest request, Cursor cursor, boolean firstPageOfCall) {
    BatchTuning tuning = cursor.tuning();
    if (tuning == null) {
      return null;
    }
    int current =
        cursor.currentBatchSize() != null
            ? cursor.currentBatchSize()
            : tuning.startingSize(cursor.batchSize());
    if (!firstPageOfCall) {
      return tuning.nextSize(current, RecentBatches.NONE);
    }
    RecentBatches recent = batchStore.recentBatches(request.runId(), BatchTuning.MEASURED_BATCHES);
    return tuning.nextSize(current, recent);
  }

  /** A page of batches planned, and whether it reached the end of the run's scope. */
  private record Page(List<PlannedBatch> batches, boolean done) {}

  /**
   * The next keys of the scope cut into batches of {@code batchSize} (the run's, or its tuned
   * size); as many as the request asks for, within {@link #MAX_KEYS_PER_PAGE} and the run's {@code
   * maxRecords}.
   */
  private Page keysPage(
      KeyedBackfill definition, PlanRequest request, Cursor cursor, Long remaining, int batchSize) {
    int batchesWanted = Math.max(1, Math.min(request.maxBatches(), MAX_KEYS_PER_PAGE / batchSize));
    long limit = (long) batchSize * batchesWanted;
    if (remaining != null) {
      limit = Math.min(limit, Math.max(0, remaining));
    }
    List<Key> keys =
        limit == 0 ? List.of() : keysAfter(definition, request.runId(), cursor, (int) limit);
    boolean scopeExhausted = keys.size() < limit;
    boolean maxRecordsReached = remaining != null && keys.size() >= remaining;
    boolean done = scopeExhausted || maxRecordsReached;
    return new Page(cut(keys, batchSize, cursor.nextBatchNumber(), done), done);
  }

  /**
   * The next windows of a windowed definition (K4), one batch of size 1 each: nothing is scanned.
   * {@code maxRecords} counts windows.
   */
  private Page windowsPage(
      KeyedBackfill.Windows windows, PlanRequest request, Cursor cursor, Long remaining) {
    long wanted = Math.max(1, Math.min(request.maxBatches(), MAX_KEYS_PER_PAGE));
    if (remaining != null) {
      wanted = Math.min(wanted, Math.max(0, remaining));
    }
    List<KeySpan> spans;
    try {
      BackfillContext context =
          optionsReader.context(request.runId(), windows.definition(), cursor.options());
      spans =
          wanted == 0 ? List.of() : windows.windowsAfter(context, cursor.afterKey(), (int) wanted);
    } catch (Exception e) {
      throw planningFailure(e);
    }
    List<PlannedBatch> batches = new ArrayList<>(spans.size());
    int number = cursor.nextBatchNumber();
    for (KeySpan span : spans) {
      batches.add(new PlannedBatch(number++, span.startKey(), span.endKey(), 1));
    }
    boolean done = spans.size() < wanted || (remaining != null && spans.size() >= remaining);
    return new Page(batches, done);
  }

  /**
   * Pending batches of the run, counted up to twice {@link PlanRequest#keepPending()}: beyond what
   * decides whether to plan, so the workflow sees how fast the window drains even while it is full.
   */
  private int pending(PlanRequest request) {
    return (int) batchStore.countPending(request.runId(), 2 * request.keepPending());
  }

  private List<Key> keysAfter(KeyedBackfill definition, long runId, Cursor cursor, int limit) {
    List<Key> keys;
    try {
      BackfillContext context =
          optionsReader.context(runId, definition.definition(), cursor.options());
      keys = definition.keysAfter(context, cursor.afterKey(), limit);
    } catch (Exception e) {
      throw planningFailure(e);
    }
    return checked(definition, cursor.afterKey(), keys, limit);
  }

  /** What a definition threw while planning, as the activity's failure: permanent or retried. */
  private static ApplicationFailure planningFailure(Exception e) {
    if (e instanceof PermanentBackfillException) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          ErrorText.of(e), DriplineFailure.PLANNING_PERMANENT.name(), e);
    }
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return ApplicationFailure.newFailureWithCause(
        ErrorText.of(e), DriplineFailure.PLANNING_FAILED.name(), e);
  }

  /**
   * {@code keys}, each conformed to the definition's key ({@link KeySchema#conform}): {@code keys}
   * itself when every key already is. A definition that returns keys of another type, out of order,
   * repeated, or more than asked would make batches overlap or planning loop forever; that is a bug
   * no retry fixes.
   */
  @SuppressWarnings("ReferenceEquality") // conform answers the key itself when it already fits
  static List<Key> checked(KeyedBackfill definition, Key afterKey, List<Key> keys, int limit) {
    String problem = null;
    // Made only once a key is not conformed as itself: the keys before it, then each conformed.
    List<Key> conformed = null;
    if (keys == null) {
      problem = "returned null";
    } else if (keys.size() > limit) {
      problem = "returned " + keys.size() + " keys when asked for at most " + limit;
    } else {
      Key previous = afterKey;
      int index = 0;
      for (Key returned : keys) {
        Key key;
        try {
          key = returned == null ? null : definition.key().conform(returned);
        } catch (IllegalArgumentException e) {
          problem = "returned key " + returned + " that does not fit its key: " + e.getMessage();
          break;
        }
        if (key == null
            || (previous != null && definition.checksKeyOrder() && key.compareTo(previous) <= 0)) {
          problem =
              "returned key "
                  + key
                  + " after "
                  + previous
                  + "; keys must be strictly ascending and after the cursor";
          break;
        }
        if (conformed == null && key != returned) {
          conformed = new ArrayList<>(keys.subList(0, index));
        }
        if (conformed != null) {
          conformed.add(key);
        }
        previous = key;
        index++;
      }
    }
    if (problem != null) {
      throw ApplicationFailure.newNonRetryableFailure(
          "keysAfter of backfill " + definition.name() + " " + problem,
          DriplineFailure.PLANNING_PERMANENT.name());
    }
    if (conformed != null) {
      return conformed;
    }
    // cut() reads keys by index.
    return keys instanceof RandomAccess ? keys : new ArrayList<>(keys);
  }

  /** A batch cut from a page of keys: its number and inclusive key range. */
  record PlannedBatch(int number, Key startKey, Key endKey, int size) {}

  /**
   * Cuts keys into batches of {@code batchSize}. A trailing partial batch is kept only when
   * planning is done; otherwise its keys are asked for again next time, so that every batch but the
   * run's last is full.
   */
  static List<PlannedBatch> cut(List<Key> keys, int batchSize, int firstNumber, boolean done) {
    List<PlannedBatch> batches = new ArrayList<>();
    int number = firstNumber;
    for (int from = 0; from < keys.size(); from += batchSize) {
      int to = Math.min(from + batchSize, keys.size());
      if (to - from < batchSize && !done) {
        break;
      }
      batches.add(new PlannedBatch(number++, keys.get(from), keys.get(to - 1), to - from));
    }
    return batches;
  }

  private Cursor read(long runId) {
    return runs.findPlanCursor(runId).map(PlanningActivitiesImpl::cursor).orElse(null);
  }

  private static Cursor cursor(PlanCursor row) {
    return new Cursor(
        row.backfill(),
        row.options(),
        RunStatus.fromWire(row.status()),
        row.stopRequested(),
        row.batchSize(),
        row.maxRecords(),
        row.planCursor(),
        row.planDone(),
        row.nextBatchNumber(),
        row.plannedKeys(),
        row.totalKeys(),
        row.tuning(),
        row.currentBatchSize());
  }

  /**
   * Inserts a page's batches as one statement ({@link BatchRepository#insertPage}: arrays
   * unnested), not one per batch.
   */
  private void insert(long runId, List<PlannedBatch> page) {
    if (page.isEmpty()) {
      return;
    }
    int n = page.size();
    int[] numbers = new int[n];
    String[] starts = new String[n];
    String[] ends = new String[n];
    int[] sizes = new int[n];
    HexFormat hex = HexFormat.of();
    for (int i = 0; i < n; i++) {
      PlannedBatch batch = page.get(i);
      numbers[i] = batch.number();
      starts[i] = hex.formatHex(KeyCodec.encode(batch.startKey()));
      ends[i] = hex.formatHex(KeyCodec.encode(batch.endKey()));
      sizes[i] = batch.size();
    }
    batchStore.insertPage(runId, numbers, starts, ends, sizes);
  }
}
