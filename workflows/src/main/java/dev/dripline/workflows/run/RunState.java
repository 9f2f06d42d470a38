package dev.dripline.workflows.run;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a run's workflow knows of its run's lifecycle, as one immutable value: its status, what
 * holds it, what operators asked that is not yet applied, and what the run's record holds as far as
 * this execution knows. Only {@link RunTransitions} makes a new one; the workflow keeps the latest.
 *
 * <p>A hold is a reason no new batch of the run starts (in-flight ones finish). Each has one name,
 * the same everywhere — in this set, in the claim's answer ({@link ClaimResult#holds()}) and in the
 * API: {@link #PAUSED} and {@link #STOPPING} are the run's own; every other name is one the last
 * claim reported ({@code brake}, a health check's name, {@code pool:<name>}).
 *
 * @param runId the run
 * @param settings the run's record as this execution loaded it; null until loaded
 * @param status the status the workflow holds for the run (and has recorded, or will)
 * @param holds why no new batch starts, in the order they were taken
 * @param recorded which of the run's own holds ({@link #PAUSED}, {@link #STOPPING}) its record
 *     holds, as far as this execution knows
 * @param pauseToggled a pause or resume was taken since the status was last recorded: a pair of
 *     them leaves {@link #paused()} as recorded, yet the record may differ — a workflow task that
 *     recorded the first and then failed (its worker lost, or its continue-as-new rejected because
 *     the second came meanwhile) is replayed with both, and its write stays
 * @param retryAsked a retry was asked and not yet applied
 * @param requestedCap the cap the run was given (null: none), before the definition's and the
 *     engine's bound it
 * @param capUnrecorded the requested cap changed by signal and is not yet recorded
 * @param statusKnown the execution has read the run's record (or its carry-over): until then a
 *     pause or resume is kept for later instead of being judged against a status not yet known
 * @param later requests kept for later: asked before the status was known, or after a retry of an
 *     ended run that has not yet re-opened it
 * @param waitingForRetry the run has ended (failed or stopped) and its workflow waits for a retry
 * @param retryDeadlineMillis until when (workflow time) an ended run's workflow waits for a retry
 * @param news something happened that the workflow's loop should look at
 * @param heldLookMillis the last claim was held (the brake, a health check): how long the loop
 *     waits before it claims again; 0 when not held
 * @param slotsFull the last claim found the run's slots full in PostgreSQL, held by batches this
 *     execution does not hold: the loop claims again after a short look
 * @param slots the slots this execution holds, and the cap they are counted against
 * @param counts the run's progress and the loop's bookkeeping
 * @param window the planning window ahead of the slots; null until the run's record is loaded
 * @param phase where the execution is: what its next turn does ({@link TurnRules})
 * @param carried what the execution before this one handed over (null: a fresh execution)
 * @param loopBegun the loop has begun in this execution ({@link RunEvent.Ready} was taken)
 * @param wakesWhileEnded how often this execution woke while its run had ended and waited for a
 *     retry: it continues as new after {@link TurnRules#MAX_WAKES_WHILE_ENDED}
 */
record RunState(
    long runId,
    RunSettings settings,
    RunStatus status,
    Set<String> holds,
    Set<String> recorded,
    boolean pauseToggled,
    boolean retryAsked,
    Integer requestedCap,
    boolean capUnrecorded,
    boolean statusKnown,
    Later later,
    boolean waitingForRetry,
    Long retryDeadlineMillis,
    boolean news,
    long heldLookMillis,
    boolean slotsFull,
    Slots slots,
    RunCounts counts,
    PlanWindow window,
    RunPhase phase,
    RunCarryOver carried,
    boolean loopBegun,
    int wakesWhileEnded) {

  /** The run is paused: asked by an operator (R9), or before its start. */
  static final String PAUSED = "paused";

  /** A stop was asked and the run has not yet ended (R7). */
  static final String STOPPING = "stopping";

  /**
   * A claim's hold: the run's failed batches are beyond its failure budget (P6b). The run pauses
   * itself on it ({@link LoopRules#claimed}).
   */
  static final String FAILURE_BUDGET = "failure-budget";

  /**
   * Requests kept for later (see {@link RunState#later}).
   *
   * @param pause the last pause (true) or resume (false), or null
   * @param stop a stop
   * @param cap a cap change by signal, or null
   */
  record Later(Boolean pause, boolean stop, Integer cap) {
    static final Later NONE = new Later(null, false, null);
  }

  RunState {
    holds = Collections.unmodifiableSet(new LinkedHashSet<>(holds));
    recorded = Collections.unmodifiableSet(new LinkedHashSet<>(recorded));
  }

  /** The state of a run whose workflow has not yet read its record. */
  static RunState initial(long runId) {
    return new RunState(
        runId,
        null,
        RunStatus.PENDING,
        Set.of(),
        Set.of(),
        false,
        false,
        null,
        false,
        false,
        Later.NONE,
        false,
        null,
        false,
        0,
        false,
        Slots.NONE,
        RunCounts.NONE,
        null,
        RunPhase.LOADING,
        null,
        false,
        0);
  }

  boolean paused() {
    return holds.contains(PAUSED);
  }

  boolean stopping() {
    return holds.contains(STOPPING);
  }

  /** Whether the run's record holds the pause, as far as this execution knows. */
  boolean pauseRecorded() {
    return recorded.contains(PAUSED);
  }

  boolean stopRecorded() {
    return recorded.contains(STOPPING);
  }

  /** The holds the last claim reported (the brake, health checks, pools), in its order. */
  List<String> claimHolds() {
    return holds.stream().filter(h -> !h.equals(PAUSED) && !h.equals(STOPPING)).toList();
  }

  /** Whether the run's record was found when the execution loaded it. */
  boolean found() {
    return settings != null && settings.found();
  }

  /** The cap the run enforces: its requested cap bounded by the definition's and the engine's. */
  int effectiveCap() {
    return CapPolicy.effective(settings.definitionCap(), requestedCap, settings.engineSafetyCap());
  }

  /** Whether a request now would apply only once a pending retry has re-opened the ended run. */
  boolean afterPendingRetry() {
    return waitingForRetry && retryAsked;
  }

  /** This state with its slots counted against {@code cap} (those held above it are kept). */
  RunState countedAgainst(int cap) {
    Edit e = edit();
    e.slots = slots.withCap(cap);
    return e.done();
  }

  /**
   * Whether this execution is due to continue as new: it started enough batches, or Temporal
   * suggests it ({@code suggested}).
   */
  boolean continueAsNewDue(boolean suggested) {
    return counts.batchesStartedHere() >= settings.maxBatchesPerExecution() || suggested;
  }

  /** This state in phase {@code phase}. */
  RunState in(RunPhase phase) {
    Edit e = edit();
    e.phase = phase;
    return e.done();
  }

  /**
   * What a new execution takes over when this one continues as new; {@code ended} null for a live
   * run.
   */
  RunCarryOver carryOver(
      boolean paused, boolean stopRequested, boolean retryRequested, RunStatus ended) {
    return new RunCarryOver(
        slots.cap(),
        paused,
        stopRequested,
        retryRequested,
        window.done(),
        counts.totalKeys(),
        counts.processedKeys(),
        counts.startedAt() == null ? null : counts.startedAt().toEpochMilli(),
        counts.claimSequence(),
        ended,
        ended == null || counts.finishedAt() == null ? null : counts.finishedAt().toEpochMilli(),
        ended == null ? null : retryDeadlineMillis);
  }

  /** This state with {@code counts}. */
  RunState with(RunCounts counts) {
    Edit e = edit();
    e.counts = counts;
    return e.done();
  }

  /** This state with {@code window}. */
  RunState with(PlanWindow window) {
    Edit e = edit();
    e.window = window;
    return e.done();
  }

  Edit edit() {
    return new Edit(this);
  }

  /** A copy to change, field by field, into the next state. */
  static final class Edit {
    RunSettings settings;
    RunStatus status;
    final Set<String> holds;
    final Set<String> recorded;
    boolean pauseToggled;
    boolean retryAsked;
    Integer requestedCap;
    boolean capUnrecorded;
    boolean statusKnown;
    Later later;
    boolean waitingForRetry;
    Long retryDeadlineMillis;
    boolean news;
    long heldLookMillis;
    boolean slotsFull;
    Slots slots;
    RunCounts counts;
    PlanWindow window;
    long runId;
    RunPhase phase;
    RunCarryOver carried;
    boolean loopBegun;
    int wakesWhileEnded;

    private Edit(RunState s) {
      runId = s.runId;
      settings = s.settings;
      status = s.status;
      holds = new LinkedHashSet<>(s.holds);
      recorded = new LinkedHashSet<>(s.recorded);
      pauseToggled = s.pauseToggled;
      retryAsked = s.retryAsked;
      requestedCap = s.requestedCap;
      capUnrecorded = s.capUnrecorded;
      statusKnown = s.statusKnown;
      later = s.later;
      waitingForRetry = s.waitingForRetry;
      retryDeadlineMillis = s.retryDeadlineMillis;
      news = s.news;
      heldLookMillis = s.heldLookMillis;
      slotsFull = s.slotsFull;
      slots = s.slots;
      counts = s.counts;
      window = s.window;
      phase = s.phase;
      carried = s.carried;
      loopBegun = s.loopBegun;
      wakesWhileEnded = s.wakesWhileEnded;
    }

    /** Holds {@code hold} if {@code on}, else lets it go. */
    Edit hold(String hold, boolean on) {
      if (on) {
        holds.add(hold);
      } else {
        holds.remove(hold);
      }
      return this;
    }

    /** Notes that the run's record holds {@code hold} if {@code on}, else that it does not. */
    Edit recorded(String hold, boolean on) {
      if (on) {
        recorded.add(hold);
      } else {
        recorded.remove(hold);
      }
      return this;
    }

    /** Looks at the planning window soon: what the chains may take changed. */
    Edit lookSoon() {
      if (window != null) {
        window = window.lookSoon();
      }
      return this;
    }

    RunState done() {
      return new RunState(
          runId,
          settings,
          status,
          holds,
          recorded,
          pauseToggled,
          retryAsked,
          requestedCap,
          capUnrecorded,
          statusKnown,
          later,
          waitingForRetry,
          retryDeadlineMillis,
          news,
          heldLookMillis,
          slotsFull,
          slots,
          counts,
          window,
          phase,
          carried,
          loopBegun,
          wakesWhileEnded);
    }
  }
}
