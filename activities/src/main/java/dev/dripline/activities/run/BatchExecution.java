package dev.dripline.activities.run;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.run.BatchRecorder.RecordConflict;
import dev.dripline.activities.run.BatchRecorder.Recorded;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.run.BatchProgress;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.RunRepository;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchPolicy;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at one batch, independent of Temporal's activity context so it can be called (and
 * tested) directly; {@link BatchActivitiesImpl} adds heartbeats around it.
 *
 * <p>One attempt may go on, in the same slot, with further pending batches of the run (a chain, see
 * {@link #process(BatchWork, BatchAttempt)}): per batch that costs one transaction and one
 * statement of bookkeeping (its completion and the next claim together) instead of a round trip
 * through Temporal (three history events, workflow tasks and a claim).
 *
 * <p>Invariants: the definition runs only for a batch that holds a slot ({@code enqueued} or {@code
 * running}) under this attempt's lease ({@link BatchLeases}); a batch becomes {@code completed} at
 * most once, and its size is added to the run's processed keys ({@code run_key_counts}) in the same
 * transaction as that transition ({@link BatchRecorder}), so a repeated attempt never counts a key
 * twice. The batch is counted in {@code dripline_batches_finished_total} in that same transaction,
 * and its slot time recorded only when that transaction made the transition. Both counters are
 * sharded ({@link ShardedCounters}): completions of one run do not queue on one row.
 *
 * <p>PostgreSQL outages are waited out in the same attempt ({@link OutageWait}), which then carries
 * on with the batch it holds, running the definition on it again if its record had not committed
 * (processing a batch twice is harmless, spec §2), rather than spending the batch's attempts on the
 * outage.
 */
@Singleton
public class BatchExecution {
  private static final Logger LOG = LoggerFactory.getLogger(BatchExecution.class);

  /** Runs of the definition on one batch, within one attempt, that an outage may cost. */
  private static final int MAX_OUTAGE_RERUNS = 5;

  /**
   * Records of one batch, within one attempt, that PostgreSQL may roll back as a deadlock's victim
   * or a serialization failure ({@link RecordConflict}) before the attempt counts as failed.
   */
  private static final int MAX_CONFLICT_RERUNS = 5;

  /** How often a chain waiting for planning to add a batch looks for one. */
  private static final long PLAN_POLL_MILLIS = 50;

  /** How often an attempt looks whether another attempt's live lease on its batch has run out. */
  private static final long HOLDER_POLL_MILLIS = 200;

  private final BatchRepository batches;
  private final RunRepository runs;
  private final BackfillRegistry registry;
  private final BatchMetrics metrics;
  private final Duration defaultLease;
  private final Duration planWait;
  private final BatchPolicy policy;
  private final LaneRest pace;
  private final BatchLeases leases;
  private final OutageWait outages;
  private final BatchRecorder recorder;

  BatchExecution(
      BatchRepository batches,
      RunRepository runs,
      BackfillRegistry registry,
      BatchMetrics metrics,
      EngineConfig engine,
      LaneRest pace,
      BatchLeases leases,
      OutageWait outages,
      BatchRecorder recorder) {
    this.batches = batches;
    this.runs = runs;
    this.registry = registry;
    this.metrics = metrics;
    this.defaultLease = engine.batchHeartbeatTimeout();
    this.planWait = engine.batchChainPlanWait();
    this.policy = engine.batchPolicy();
    this.pace = pace;
    this.leases = leases;
    this.outages = outages;
    this.recorder = recorder;
  }

  /** Whether this worker hosts the definition named {@code backfill}. */
  public boolean hosts(String backfill) {
    return registry.find(backfill).isPresent();
  }

  /** Processes the batch, without chaining, as an attempt of its own. */
  public BatchResult process(BatchWork work) {
    return process(work, BatchAttempt.standalone(defaultLease));
  }

  /**
   * Processes the head batch unless it was completed already or no longer holds a slot; then, for
   * as long as {@link BatchWork#chainMillis()} allows, goes on in the same slot with the run's
   * lowest pending batch, one at a time (a chain). A chained batch is taken only while the run is
   * running, not stopping, and its cap still covers this activity's lane and its slot holders, so
   * stop, pause and a lowered cap end a chain at its next batch, and the cap holds: the chain holds
   * one batch at a time in the slot the workflow counts for it.
   *
   * <p>Every batch the attempt takes is recorded with {@code attempt} as its holder and a lease the
   * caller renews ({@link #renewLease}); a batch held by another attempt whose lease is live is
   * waited for, never run alongside it (R5b).
   *
   * <p>A paced run ({@link LaneRest}) rests after each batch this attempt completes, before the
   * chain takes its next batch or, after the last, before the attempt returns (so the workflow's
   * next batch in this slot starts after the rest too); a paced chain claims its next batch only
   * after the rest, so a stop, pause or hold that comes meanwhile starts no batch ({@link #rest}).
   *
   * @param attempt who holds the batches, and whether it may go on (false once it was fenced:
   *     cancelled, timed out, or its lease not renewed)
   * @throws ApplicationFailure of type {@link DriplineFailure#BATCH_PERMANENT} (non-retryable) or
   *     {@link DriplineFailure#BATCH_FAILED} (retryable; not on its last attempt) when the
   *     definition fails on the head batch; a chained batch that fails is handed back in the result
   *     instead
   */
  public BatchResult process(BatchWork work, BatchAttempt attempt) {
    attempt.begin(work.runId());
    try {
      return processChain(work, attempt);
    } finally {
      attempt.end();
    }
  }

  private BatchResult processChain(BatchWork work, BatchAttempt attempt) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(work.chainMillis());
    KeyedBackfill definition = registry.require(work.backfill());
    long runId = work.runId();
    double niceRatio = outages.store(() -> pace.niceRatio(runId), null, attempt);
    Ran ran = processHead(definition, work, attempt);
    BatchResult head = ran.result();
    boolean rested = rest(runId, niceRatio, ran.nanos(), attempt);
    if (work.chainMillis() <= 0 || work.lane() < 1 || head.outcome() == BatchOutcome.SKIPPED) {
      return head;
    }
    int headNumber = work.batch().number();
    int chained = 0;
    long chainedKeys = 0;
    Reruns reruns = new Reruns();
    // A batch this chain held when an earlier attempt of this activity died: it holds the slot.
    StartedBatch next = resumeHeldOnceFree(runId, headNumber, attempt);
    if (next == null && rested && mayGoOn(deadline, attempt)) {
      next = claimOrAwait(runId, headNumber, work.lane(), deadline, attempt);
    }
    while (next != null) {
      if (!attempt.mayContinue()) {
        // Fenced while the round trip that claimed or resumed the batch was in flight: another
        // attempt may take it over, so this one never starts it. It goes back to pending rather
        // than wait for a retry to resume it: a fence before the deadline may still see this
        // result accepted, and then no retry comes. The fence's interrupt must not fail the
        // release.
        Thread.interrupted();
        leases.releaseHeld(runId, headNumber, BatchLeases.NO_BATCH, attempt);
        break;
      }
      StartedBatch batch = next;
      long batchStartedAt = System.nanoTime();
      // The completion and the next claim are one statement and commit together: one commit per
      // chained batch (with a transactional definition, the batch's own writes too). A paced chain
      // claims its next batch only after its rest.
      Recorded recorded;
      try {
        recorded =
            runWithReruns(
                definition,
                runId,
                batch,
                attempt,
                reruns,
                transaction ->
                    niceRatio == 0 && mayGoOn(deadline, attempt)
                        ? recorder.completeAndClaimNext(
                            transaction, runId, batch.number(), headNumber, work.lane(), attempt)
                        : recorder.complete(transaction, runId, batch.number(), attempt));
      } catch (Exception e) {
        Failed failed = attemptFailed(runId, batch.number(), e, attempt);
        // Its record may have committed unseen, with the claim of the next batch: that one goes
        // back to pending, or nobody would ever run it.
        leases.releaseHeld(runId, headNumber, batch.number(), attempt);
        return new BatchResult(
            head.outcome(),
            head.size(),
            chained,
            chainedKeys,
            new BatchRef(
                batch.number(),
                batch.range().startKey().toString(),
                batch.range().endKey().toString(),
                batch.size()),
            failed.error(),
            e instanceof PermanentBackfillException || policy.exhaustedBy(failed.count()));
      }
      if (recorded == null) {
        // An outage waited out: whether the batch's record committed is unknown. Go on with what
        // this chain holds — the same batch if it did not (run again), the next one if it did,
        // nothing if it claimed none. Still this attempt: the attempts count is not raised again.
        long sentAt = System.nanoTime();
        next =
            outages.store(
                () -> leases.resumeHeld(runId, headNumber, false, attempt), null, attempt);
        if (next != null) {
          attempt.hold(next.number(), sentAt);
          attempt.unfence(sentAt);
        } else {
          attempt.release();
        }
        continue;
      }
      if (recorded.completed() == null) {
        // Lost its slot meanwhile (the run's slots were recovered): whoever holds it counts it.
        attempt.release();
        break;
      }
      metrics.recordSlotTime(recorded.completed());
      reruns.conflicts = 0;
      chained++;
      chainedKeys += batch.size();
      next = recorded.next();
      if (next != null) {
        attempt.hold(next.number(), recorded.sentAtNanos());
      } else {
        attempt.release();
      }
      if (next == null
          && rest(runId, niceRatio, System.nanoTime() - batchStartedAt, attempt)
          && mayGoOn(deadline, attempt)) {
        next = claimOrAwait(runId, headNumber, work.lane(), deadline, attempt);
      }
    }
    return new BatchResult(head.outcome(), head.size(), chained, chainedKeys, null, null, false);
  }

  /** The head batch: the one the workflow claimed for this activity. */
  private Ran processHead(KeyedBackfill definition, BatchWork work, BatchAttempt attempt) {
    long runId = work.runId();
    int number = work.batch().number();
    if (attempt.retry()) {
      // An attempt that failed the batch's last allowed time may have reported it too late: its
      // start-to-close timeout passed first, and Temporal, which retries without limit, tried
      // again. The batch fails now, as that report would have made it.
      Optional<String> exhausted =
          outages.store(
              () -> batches.exhaustedError(runId, number, policy.maxAttempts()), null, attempt);
      if (exhausted.isPresent()) {
        throw ApplicationFailure.newNonRetryableFailure(
            exhausted.get(), DriplineFailure.BATCH_FAILED.name());
      }
    }
    StartedBatch started = takeHead(runId, number, attempt);
    if (started == null) {
      return Ran.without(outages.store(() -> notStarted(runId, number), null, attempt));
    }
    long startedAt = System.nanoTime();
    Reruns reruns = new Reruns();
    while (true) {
      Recorded recorded;
      try {
        recorded =
            runWithReruns(
                definition,
                runId,
                started,
                attempt,
                reruns,
                transaction -> recorder.complete(transaction, runId, number, attempt));
      } catch (Exception e) {
        Failed failed = attemptFailed(runId, number, e, attempt);
        attempt.release();
        throw headFailure(failed, e);
      }
      if (recorded == null) {
        // An outage waited out: whether the batch's record committed is unknown.
        long sentAt = System.nanoTime();
        if (outages.store(() -> leases.renew(runId, number, attempt), null, attempt) == 1) {
          // Its record did not commit and the batch is still its own: run it again, in the same
          // attempt.
          attempt.confirmed(number, sentAt);
          attempt.unfence(sentAt);
          if (attempt.mayContinue()) {
            continue;
          }
        }
        // Its record committed unseen, or it lost its slot: whoever completed it counted it.
        attempt.release();
        return Ran.without(outages.store(() -> notStarted(runId, number), null, attempt));
      }
      attempt.release();
      if (recorded.completed() != null) {
        metrics.recordSlotTime(recorded.completed());
        return new Ran(
            new BatchResult(BatchOutcome.COMPLETED, started.size()), System.nanoTime() - startedAt);
      }
      // Lost its slot while running (run recovered or batch failed meanwhile): its keys are not
      // counted here; whoever holds the batch now will count them.
      return Ran.without(outages.store(() -> notStarted(runId, number), null, attempt));
    }
  }

  /** Reruns of one batch that an attempt has spent, on outages and on rolled-back records. */
  private static final class Reruns {
    int outages;
    int conflicts;
  }

  /**
   * Runs the definition on {@code batch} and records it ({@link BatchRecorder#runAndRecord}),
   * running it again when PostgreSQL rolled its record back, up to {@link #MAX_CONFLICT_RERUNS}
   * times, and waiting out an outage, up to {@link #MAX_OUTAGE_RERUNS} times.
   *
   * @return what the record did; null after an outage was waited out, when whether the record
   *     committed is unknown and the caller looks at what the attempt holds
   * @throws Exception the failure that ends the attempt at this batch
   */
  private Recorded runWithReruns(
      KeyedBackfill definition,
      long runId,
      StartedBatch batch,
      BatchAttempt attempt,
      Reruns reruns,
      BatchRecorder.Recording record)
      throws Exception {
    while (true) {
      try {
        return recorder.runAndRecord(definition, runId, batch, attempt, record);
      } catch (Exception thrown) {
        if (thrown instanceof RecordConflict conflict
            && reruns.conflicts++ < MAX_CONFLICT_RERUNS
            && attempt.mayContinue()) {
          // Nothing of the batch was recorded and it is still this attempt's: run it again.
          LOG.info(
              "Run {}: the record of batch {} was rolled back ({}); running it again in the same"
                  + " attempt",
              runId,
              batch.number(),
              ErrorText.of(conflict.getCause()));
          continue;
        }
        Exception e = RecordConflict.unwrap(thrown);
        if (OutageWait.mayBeWaitedOut(e, attempt)
            && reruns.outages++ < MAX_OUTAGE_RERUNS
            && outages.await(runId, batch.number(), e, attempt)) {
          return null;
        }
        throw e;
      }
    }
  }

  /**
   * Renews the lease of the batch {@code attempt} holds, if any ({@link BatchLeases#renewHeld}).
   * Called by whoever keeps the attempt alive (a ticker), never by the attempt's own thread.
   */
  public void renewLease(long runId, BatchAttempt attempt) {
    leases.renewHeld(runId, attempt);
  }

  /**
   * Marks the head batch running with {@code attempt} as its holder: from {@code enqueued}, or from
   * {@code running} once the lease of the attempt that held it has run out. While another attempt
   * holds it with a live lease — an attempt Temporal gave up on that has not stopped yet — this one
   * waits rather than run the batch alongside it. Null when the batch holds no slot (any more).
   */
  private StartedBatch takeHead(long runId, int number, BatchAttempt attempt) {
    while (true) {
      long sentAt = System.nanoTime();
      // Single statements in autocommit: one round trip each, no row held across round trips.
      StartedBatch started =
          outages.store(() -> leases.startHead(runId, number, attempt), null, attempt);
      if (started != null) {
        attempt.hold(number, sentAt);
        return started;
      }
      if (!attempt.mayContinue()
          || !outages.store(() -> leases.heldByAnotherLive(runId, number, attempt), null, attempt)
          || !pause(HOLDER_POLL_MILLIS)) {
        return null;
      }
      attempt.waitedForHolder();
    }
  }

  /**
   * The batch an earlier attempt of this activity held in its chain when it died, once that
   * attempt's lease has run out (waiting while it is live); null if there is none.
   */
  private StartedBatch resumeHeldOnceFree(long runId, int headNumber, BatchAttempt attempt) {
    while (true) {
      long sentAt = System.nanoTime();
      StartedBatch held =
          outages.store(() -> leases.resumeHeld(runId, headNumber, true, attempt), null, attempt);
      if (held != null) {
        attempt.hold(held.number(), sentAt);
        return held;
      }
      if (!attempt.mayContinue()
          || !outages.store(
              () -> leases.chainHeldByAnotherLive(runId, headNumber, attempt), null, attempt)
          || !pause(HOLDER_POLL_MILLIS)) {
        return null;
      }
      attempt.waitedForHolder();
    }
  }

  /**
   * The chain's next batch: the run's lowest pending one or, while planning still adds batches (the
   * run running, not stopping, its cap covering {@code lane}, its plan not done), the first one
   * planned within {@link EngineConfig#batchChainPlanWait()}: a chain that ended for want of a
   * pending batch would cost the workflow a round trip to start another when the page arrives.
   */
  private StartedBatch claimOrAwait(
      long runId, int headNumber, int lane, long deadline, BatchAttempt attempt) {
    long waitUntil = Math.min(deadline, System.nanoTime() + planWait.toNanos());
    while (true) {
      long sentAt = System.nanoTime();
      StartedBatch next =
          outages.store(
              () -> leases.claimNext(runId, headNumber, lane, attempt),
              // The first try may have taken a batch (and counted its attempt) and lost the answer:
              // resume that one.
              () -> {
                StartedBatch held = leases.resumeHeld(runId, headNumber, false, attempt);
                return held != null ? held : leases.claimNext(runId, headNumber, lane, attempt);
              },
              attempt);
      if (next != null) {
        attempt.hold(next.number(), sentAt);
        return next;
      }
      if (System.nanoTime() - waitUntil >= 0
          || !attempt.mayContinue()
          || !outages.store(() -> runs.planningGoesOn(runId, lane) > 0, null, attempt)) {
        return null;
      }
      if (!pause(PLAN_POLL_MILLIS)) {
        return null;
      }
    }
  }

  /** Whether the chain may take another batch: time left, and the attempt not fenced. */
  private static boolean mayGoOn(long deadline, BatchAttempt attempt) {
    return System.nanoTime() - deadline < 0 && attempt.mayContinue();
  }

  /**
   * The lane's rest after a batch whose run and record took {@code batchNanos}, at the run's {@code
   * niceRatio} ({@link LaneRest#restNanos}): sleeps in slices of at most a second and, after each
   * that leaves more to rest, asks whether the run may still start a batch ({@link
   * RunRepository#mayStartBatches}), so a stop, pause, hold or spent failure budget ends the rest
   * within a second, and a fence (cancel, deadline, lost lease: it interrupts the sleep) at once.
   * The attempt holds no batch while it rests; its heartbeats go on.
   *
   * @return whether the lane may take another batch: the rest ran its course (or there was none);
   *     false when it was cut short
   */
  private boolean rest(long runId, double niceRatio, long batchNanos, BatchAttempt attempt) {
    long restNanos = LaneRest.restNanos(niceRatio, batchNanos);
    if (restNanos == 0) {
      return true;
    }
    long until = System.nanoTime() + restNanos;
    while (true) {
      if (!pause(LaneRest.sliceMillis(until - System.nanoTime())) || !attempt.mayContinue()) {
        return false;
      }
      if (until - System.nanoTime() <= 0) {
        return true;
      }
      if (!outages.store(() -> runs.mayStartBatches(runId) > 0, null, attempt)) {
        LOG.debug("Run {}: may start no batch; its lane stops resting", runId);
        return false;
      }
    }
  }

  /** Sleeps; false if interrupted (the attempt was fenced). */
  private static boolean pause(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private BatchResult notStarted(long runId, int number) {
    Optional<BatchProgress> batch = batches.progress(runId, number);
    if (batch.isPresent() && BatchStatus.fromWire(batch.get().status()) == BatchStatus.COMPLETED) {
      return new BatchResult(BatchOutcome.ALREADY_COMPLETED, batch.get().size());
    }
    return new BatchResult(BatchOutcome.SKIPPED, 0);
  }

  /**
   * The head batch's failed attempt as the activity's failure: non-retryable when the failure was
   * declared permanent or the batch has no attempts left, else retried after the policy's backoff
   * for its failed attempts. Temporal retries the activity without limit ({@code
   * RunActivityOptions}): attempts that died with their worker are not counted here, nor spent.
   */
  private ApplicationFailure headFailure(Failed failed, Exception e) {
    if (e instanceof PermanentBackfillException) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          failed.error(), DriplineFailure.BATCH_PERMANENT.name(), e);
    }
    if (policy.exhaustedBy(failed.count())) {
      return ApplicationFailure.newNonRetryableFailureWithCause(
          failed.error(), DriplineFailure.BATCH_FAILED.name(), e);
    }
    return ApplicationFailure.newFailureWithCauseAndDelay(
        failed.error(),
        DriplineFailure.BATCH_FAILED.name(),
        e,
        policy.retryDelay(Math.max(1, failed.count())));
  }

  /**
   * Records the failed attempt's error and, if it {@code counts}, counts it (the error of the last
   * attempt is what an operator sees while it retries). The attempt is over, so its lease ends with
   * it: the next attempt need not wait for it to run out.
   *
   * @return the batch's failed attempts so far; 0 if the batch was not this attempt's any more, or
   *     the record failed (best effort: the batch is then retried, as PostgreSQL answers again)
   */
  private int recordAttemptFailed(
      long runId, int number, String error, boolean counts, BatchAttempt attempt) {
    try {
      return batches.recordAttemptFailed(runId, number, attempt.holder(), error, counts);
    } catch (RuntimeException e) {
      LOG.warn("Could not record the error of batch {} of run {}", number, runId, e);
      return 0;
    }
  }

  /**
   * A failed attempt: its error's text, and the batch's failed attempts so far (0 if the failure
   * could not be recorded).
   */
  private record Failed(String error, int count) {}

  /**
   * Records a failed attempt's error on its batch and counts it among its failed attempts, unless
   * the attempt was interrupted without a fence of ours — its worker is shutting down (a deploy),
   * which is no more the definition's failure than a killed worker is — or fenced for a reason
   * other than its deadline.
   */
  private Failed attemptFailed(long runId, int number, Exception e, BatchAttempt attempt) {
    boolean workerStopping = attempt.mayContinue() && interrupted(e);
    if (!attempt.mayContinue() || workerStopping) {
      // The interrupt did its work; the records below must not fail on it.
      Thread.interrupted();
    } else if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String error = ErrorText.of(e);
    if (!attempt.mayContinue()) {
      error = "attempt stopped (" + attempt.fenced() + "): " + error;
    } else if (workerStopping) {
      error = "attempt interrupted (worker stopping): " + error;
    }
    // A fence counts only for the definition's own overrun (its deadline); a heartbeat Temporal
    // rejected (the attempt was given up: cut off, or cancelled) or a lease PostgreSQL could not
    // renew is no failure of the definition's.
    boolean counts =
        attempt.mayContinue() ? !workerStopping : attempt.fenced() == BatchAttempt.Fence.TIMED_OUT;
    // The error is on the batch only until it completes: the log keeps it.
    LOG.info(
        "Run {}: attempt {} at batch {} failed{}: {}",
        runId,
        attempt.holder(),
        number,
        counts ? "" : " (not counted)",
        error);
    int count = recordAttemptFailed(runId, number, error, counts, attempt);
    if (workerStopping) {
      Thread.currentThread().interrupt();
    }
    return new Failed(error, count);
  }

  /** Whether the thread was interrupted, or {@code e} says an interrupt ended it. */
  private static boolean interrupted(Throwable e) {
    if (Thread.currentThread().isInterrupted()) {
      return true;
    }
    Throwable cause = e;
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (cause instanceof InterruptedException
          || cause instanceof java.nio.channels.ClosedByInterruptException) {
        return true;
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return false;
  }

  /**
   * What processing the head batch came to, and how long its run and record took when it completed
   * it ({@code nanos}, else 0: nothing to rest after).
   */
  private record Ran(BatchResult result, long nanos) {
    static Ran without(BatchResult result) {
      return new Ran(result, 0);
    }
  }
}
