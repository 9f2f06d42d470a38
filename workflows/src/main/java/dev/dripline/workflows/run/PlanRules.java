package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.StartPlanning;
import dev.dripline.workflows.run.RunCommand.Warn;
import dev.dripline.workflows.run.RunTransitions.Step;

/**
 * The rules of the run's planning (part of {@link RunTransitions}): when the next planning call
 * starts and what it asks for, and what its answer means for the window ({@link PlanWindow}) and
 * the run.
 *
 * <p>The chains' pace is made at its first use: the first call of a run with chains, or the first
 * page that reports what is pending.
 */
final class PlanRules {
  private PlanRules() {}

  /**
   * The loop asks for the next page of the plan: a call starts unless one is under way, planning is
   * over, or a stop is under way.
   */
  static Step planNext(RunState s) {
    PlanWindow window = s.window();
    if (!window.mayCall(s.stopping())) {
      return Step.to(s);
    }
    if (window.needsPace()) {
      window = window.withPace(new ChainPace());
    }
    PlanRequest request = window.nextRequest(s.runId(), s.slots().cap());
    return Step.to(s.with(window.called()), new StartPlanning(request));
  }

  /**
   * After the loop filled its slots: with chains, the next page is planned as soon as fewer than
   * the window were pending at the last call, not only once no pending batch is left.
   */
  static Step keepAhead(RunState s) {
    return s.window().runsLow(s.slots().cap(), s.stopping()) ? planNext(s) : Step.to(s);
  }

  /**
   * A planning call's outcome, handled at {@code nowMillis}: a failure stops planning (the run ends
   * failed once nothing is in flight, unless a retry re-opens it); a page goes into the window,
   * what it left pending to the chains' pace. Batches may be pending to claim when the call planned
   * some or found some pending (also when the window was full and it planned nothing — claim those
   * rather than ask the planner again); once every key is in a batch, the run's key count is the
   * plan's.
   */
  static Step planned(RunState s, PlanPage page, String failure, long nowMillis) {
    PlanWindow window = s.window().answered();
    if (failure != null) {
      String error = "planning failed: " + failure;
      return Step.to(s.with(window.withError(error)), new Warn("run " + s.runId() + ": " + error));
    }
    if (page.pendingBatches() >= 0 && window.pace() == null) {
      window = window.withPace(new ChainPace());
    }
    RunCounts counts = s.counts();
    if (page.batchesCreated() > 0 || page.pendingBatches() > 0) {
      counts = counts.withMayHavePending(true);
    }
    if (page.done()) {
      counts = counts.withTotalKeys(page.totalKeys());
    }
    return Step.to(s.with(counts).with(window.takePage(page, nowMillis, s.slots().cap())));
  }
}
