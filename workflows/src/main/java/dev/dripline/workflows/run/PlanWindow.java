package dev.dripline.workflows.run;

/**
 * The planning side of a run's state, as an immutable value ({@link RunState#window}): how many
 * batches each planning call asks for, how large a window of pending batches planning keeps ahead
 * of the chains, and where planning stands (a call under way, every key planned, or failed). The
 * rules that use it are {@link PlanRules}'.
 *
 * <p>The first calls of an execution ramp up — a quarter, then half, then whole pages, never under
 * twice the cap — so the first batches start after a short planning query instead of a full page's,
 * and each page is planned while the smaller one before it runs. With chains, which take pending
 * batches without the workflow seeing them, a call asks for half the window and the planner plans
 * only while fewer than the window are pending, reporting how many are; the window is sized by the
 * chains' pace ({@link ChainPace}) once it is known.
 *
 * @param planPageBatches batches planned per page
 * @param chains whether batch activities chain further batches
 * @param done every key in scope is in a batch
 * @param error why planning failed, or null; planning stops until a retry forgets it
 * @param underWay a planning call is under way, its outcome not yet handled
 * @param pendingAfterPlan batches pending after the last planning call, as its planner reported; -1
 *     if not known
 * @param calls planning calls started by this execution
 * @param pace the chains' pace, made at its first use; null until then, and in a run without chains
 */
record PlanWindow(
    int planPageBatches,
    boolean chains,
    boolean done,
    String error,
    boolean underWay,
    int pendingAfterPlan,
    int calls,
    ChainPace pace) {
  /** The window holds at least this much of what the chains take (four short looks). */
  static final long DRAIN_MILLIS = 2_000;

  /** Bound of the part of the window sized by the chains' pace, in batches. */
  static final int MAX_PACED = 10_000;

  /** The window of an execution that has made no planning call yet. */
  static PlanWindow of(int planPageBatches, long chainMillis, boolean done) {
    return new PlanWindow(planPageBatches, chainMillis > 0, done, null, false, -1, 0, null);
  }

  /** Whether planning has nothing more to do: every key is in a batch, or it failed. */
  boolean over() {
    return done || error != null;
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
   * enough for every slot to take several before the next look (with only a few per slot, many
   * chains of fast batches drain the window and fall back to an activity per batch), and at least
   * {@link #DRAIN_MILLIS} of what they take at their current pace (less, and fast chains empty the
   * window between two looks and wait for the planner).
   */
  int size(int cap) {
    return size(cap, pace == null ? 0 : pace.takenPerMilli());
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

  /** Whether a planning call may start: none is under way, planning is not over, no stop is. */
  boolean mayCall(boolean stopping) {
    return !underWay && !done && error == null && !stopping;
  }

  /** Whether the next call, or the next page taken, first needs the chains' pace made. */
  boolean needsPace() {
    return chains && pace == null;
  }

  /** The next planning call of run {@code runId} at {@code cap}: see {@link #pageBatches}. */
  PlanRequest nextRequest(long runId, int cap) {
    return new PlanRequest(runId, pageBatches(cap), chains ? size(cap) : 0);
  }

  /** The window with a call started: under way until its outcome is handled. */
  PlanWindow called() {
    return new PlanWindow(
        planPageBatches, chains, done, error, true, pendingAfterPlan, calls + 1, pace);
  }

  /** The window with the call under way answered. */
  PlanWindow answered() {
    return new PlanWindow(
        planPageBatches, chains, done, error, false, pendingAfterPlan, calls, pace);
  }

  /**
   * The window after a call planned {@code page}, at {@code nowMillis}: what it left pending
   * (reported to the chains' pace, whose window is sized at {@code cap}) and whether every key is
   * now in a batch.
   */
  PlanWindow takePage(PlanPage page, long nowMillis, int cap) {
    ChainPace next = pace;
    if (page.pendingBatches() >= 0) {
      next =
          pace.report(
              nowMillis,
              page.pendingBatches(),
              page.batchesCreated(),
              takenPerMilli -> size(cap, takenPerMilli));
    }
    return new PlanWindow(
        planPageBatches,
        chains,
        done || page.done(),
        error,
        underWay,
        page.pendingBatches(),
        calls,
        next);
  }

  /** The window with every key in a batch if {@code done}, as carried over. */
  PlanWindow withDone(boolean done) {
    return new PlanWindow(
        planPageBatches, chains, done, error, underWay, pendingAfterPlan, calls, pace);
  }

  /** The window with planning failed for good ({@code error}), or its failure forgotten (null). */
  PlanWindow withError(String error) {
    return new PlanWindow(
        planPageBatches, chains, done, error, underWay, pendingAfterPlan, calls, pace);
  }

  /** The window with the chains' pace {@code pace}. */
  PlanWindow withPace(ChainPace pace) {
    return new PlanWindow(
        planPageBatches, chains, done, error, underWay, pendingAfterPlan, calls, pace);
  }

  /** How long the loop waits for something to happen before it looks at the window again. */
  long lookEveryMillis() {
    return pace == null ? ChainPace.MIN_LOOK_MILLIS : pace.lookEveryMillis();
  }

  /** The window looked at soon again: what the chains may take changed (cap, pause, resume). */
  PlanWindow lookSoon() {
    return pace == null ? this : withPace(pace.restart());
  }
}
