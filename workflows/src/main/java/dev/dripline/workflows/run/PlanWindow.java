package dev.dripline.workflows.run;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The planning side of a run's workflow: how many batches each planning call asks for, how large a
 * window of pending batches planning keeps ahead of the chains, and where planning stands (a call
 * under way, its outcome not yet handled, every key planned, or failed).
 *
 * <p>The first calls of an execution ramp up — a quarter, then half, then whole pages, never under
 * twice the cap — so the first batches start after a short planning query instead of a full page's
 * (W2 in docs/benchmarks.md), and each page is planned while the smaller one before it runs. With
 * chains, which take pending batches without the workflow seeing them, a call asks for half the
 * window and the planner plans only while fewer than the window are pending, reporting how many
 * are; the window is sized by the chains' pace ({@link ChainPace}) once it is known.
 *
 * <p>Workflow state: deterministic, no clock and no Temporal calls; the workflow passes the time,
 * the cap and whether a stop is under way, and starts the calls this asks for. The pace is made at
 * its first use by the factory the workflow passes (which asks Temporal for the {@code early-pace}
 * version); a run without chains never uses it.
 */
final class PlanWindow {
  /** The window holds at least this much of what the chains take (four short looks). */
  static final long DRAIN_MILLIS = 2_000;

  /** Bound of the part of the window sized by the chains' pace, in batches. */
  static final int MAX_PACED = 10_000;

  /**
   * A planning call's outcome, received in the background and handled in the workflow's loop.
   *
   * @param page what the call planned, if it completed
   * @param failure why it failed, if it did
   */
  record Planned(PlanPage page, RuntimeException failure) {}

  private final long runId;
  private final int planPageBatches;
  private final boolean chains;
  private final Supplier<ChainPace> newPace;

  /** Made at its first use, which a run without chains never reaches. */
  private ChainPace pace;

  private boolean done;
  private String error;
  private boolean underWay;
  private Planned planned;

  /** Batches pending after the last planning call, as its planner reported; -1 if not known. */
  private int pendingAfterPlan = -1;

  /** Planning calls started by this execution. */
  private int calls;

  /**
   * @param runId the run
   * @param planPageBatches batches planned per page
   * @param chainMillis how long a batch activity chains further batches (0: never)
   * @param done whether every key in scope is already in a batch
   * @param newPace makes the chains' pace at its first use
   */
  PlanWindow(
      long runId,
      int planPageBatches,
      long chainMillis,
      boolean done,
      Supplier<ChainPace> newPace) {
    this.runId = runId;
    this.planPageBatches = planPageBatches;
    this.chains = chainMillis > 0;
    this.done = done;
    this.newPace = newPace;
  }

  /** Whether every key in scope is in a batch. */
  boolean done() {
    return done;
  }

  /** Sets whether every key in scope is in a batch, as carried over from the execution before. */
  void setDone(boolean done) {
    this.done = done;
  }

  /** Why planning failed, or {@code null}; planning stops until {@link #clearError}. */
  String error() {
    return error;
  }

  /** Planning failed for good: no further call until {@link #clearError}. */
  void fail(String error) {
    this.error = error;
  }

  /** Forgets a planning failure: a retry re-opened the run. */
  void clearError() {
    error = null;
  }

  /** Whether planning has nothing more to do: every key is in a batch, or it failed. */
  boolean over() {
    return done || error != null;
  }

  /** Whether a planning call is under way, its outcome not yet handled. */
  boolean underWay() {
    return underWay;
  }

  /**
   * Whether planning keeps a window of pending batches ahead of the chains: chains run, the planner
   * has reported what is pending, and planning is neither over nor stopped. The loop then looks at
   * the window every {@link #lookEveryMillis} while batches are in flight.
   */
  boolean keepsAhead(boolean stopping) {
    return chains && pendingAfterPlan >= 0 && !done && error == null && !stopping;
  }

  /**
   * Whether planning {@link #keepsAhead} and fewer than the window were pending at the last call.
   */
  boolean runsLow(int cap, boolean stopping) {
    return keepsAhead(stopping) && pendingAfterPlan < size(cap);
  }

  /**
   * Pending batches planning keeps ready for chains, which take batches without the workflow:
   * enough for every slot to take several before the next look (W3 in docs/benchmarks.md: a window
   * of 4 per slot let 100 chains of no-op batches drain it and fall back to an activity per batch),
   * and at least {@link #DRAIN_MILLIS} of what they take at their current pace (W2: 4 chains of 30
   * ms batches took a window of 64 within one 500 ms look, then waited for the planner).
   */
  int size(int cap) {
    return size(cap, pace().takenPerMilli());
  }

  /** {@link #size(int)} if the chains take {@code takenPerMilli} batches per millisecond. */
  int size(int cap, double takenPerMilli) {
    int fixed = Math.max(2 * planPageBatches, 16 * cap);
    double drain = Math.ceil(takenPerMilli * DRAIN_MILLIS);
    return (int) Math.max(fixed, Math.min(MAX_PACED, drain));
  }

  /**
   * Batches asked of the next planning call: half the window when chains run, else a page (at least
   * the cap), ramped up over the execution's first calls.
   */
  int pageBatches(int cap) {
    int page = Math.max(planPageBatches, cap);
    int full = chains ? Math.max(page, size(cap) / 2) : page;
    int ramp = full >> Math.max(0, 2 - calls);
    return Math.min(full, Math.max(2 * cap, ramp));
  }

  /**
   * The next planning call to start, now under way; empty if one is under way already, planning is
   * over or a stop is under way.
   */
  Optional<PlanRequest> nextCall(int cap, boolean stopping) {
    if (underWay || done || error != null || stopping) {
      return Optional.empty();
    }
    underWay = true;
    int batches = pageBatches(cap);
    calls++;
    int keepPending = chains ? size(cap) : 0;
    return Optional.of(new PlanRequest(runId, batches, keepPending));
  }

  /** Receives the outcome of the call under way; it is handled through {@link #takePlanned}. */
  void planned(PlanPage page, RuntimeException failure) {
    planned = new Planned(page, failure);
  }

  /** Whether a call's outcome waits to be handled. */
  boolean hasPlanned() {
    return planned != null;
  }

  /** The outcome of the call under way, if it came; the call is then over. */
  Optional<Planned> takePlanned() {
    if (planned == null) {
      return Optional.empty();
    }
    Planned outcome = planned;
    planned = null;
    underWay = false;
    return Optional.of(outcome);
  }

  /**
   * Takes what a call planned, at {@code nowMillis}: what it left pending (reported to the chains'
   * pace, whose window is sized at {@code cap}) and whether every key is now in a batch.
   *
   * @return whether batches may be pending to claim: the call planned some, or found some pending
   *     (also when the window was full and it planned nothing — claim those rather than ask the
   *     planner again)
   */
  boolean takePage(PlanPage page, long nowMillis, int cap) {
    pendingAfterPlan = page.pendingBatches();
    if (page.pendingBatches() >= 0) {
      pace()
          .report(
              nowMillis,
              page.pendingBatches(),
              page.batchesCreated(),
              takenPerMilli -> size(cap, takenPerMilli));
    }
    if (page.done()) {
      done = true;
    }
    return page.batchesCreated() > 0 || page.pendingBatches() > 0;
  }

  /** How long the loop waits for something to happen before it looks at the window again. */
  long lookEveryMillis() {
    return pace().lookEveryMillis();
  }

  /** Looks at the window soon again: what the chains may take changed (cap, pause, resume). */
  void lookSoon() {
    if (pace != null) {
      pace.restart();
    }
  }

  private ChainPace pace() {
    if (pace == null) {
      pace = newPace.get();
    }
    return pace;
  }
}
