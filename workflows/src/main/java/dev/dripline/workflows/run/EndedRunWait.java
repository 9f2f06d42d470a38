package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * A run that ended failed or stopped keeps its workflow open for a retry — the API's, or the
 * Temporal CLI's or Web UI's {@code retry} signal — for {@code ended-run-retry-window}, continuing
 * as new while it waits. A retry re-queues as the endpoint does (R8) and, if that re-opened the
 * run, the run goes on in the same workflow ({@link #revive}); with nothing to re-queue it is
 * answered and logged, and the run stays as it ended.
 */
final class EndedRunWait {
  private static final Logger log = Workflow.getLogger(EndedRunWait.class);

  /**
   * How often an ended run's workflow looks at the run's record while it waits for a retry: a
   * deleted run ends it, and a run re-opened in its record (by a build from before the workflow was
   * its run's only writer) goes on.
   */
  static final Duration ENDED_RUN_LOOK = Duration.ofMinutes(10);

  /** Wake-ups of an ended run's workflow per execution before it continues as new. */
  static final int MAX_WAKES_WHILE_ENDED = 100;

  private final RunLedger run;
  private final RunEngine engine;

  /** Wake-ups of this execution while the run had ended. */
  private int wakes;

  EndedRunWait(RunLedger run, RunEngine engine) {
    this.run = run;
    this.engine = engine;
  }

  /**
   * Waits for a retry until the window ends. Every {@link #ENDED_RUN_LOOK} the run's record is
   * read: deleted, the workflow ends; re-opened (a retry the API recorded but could not signal),
   * the run goes on.
   *
   * @return true if the run goes on, false if the workflow completes
   */
  boolean await() {
    engine.on(new RunEvent.EndedWaitBegins(Workflow.currentTimeMillis()));
    while (true) {
      if (run.state.retryAsked()) {
        engine.on(new RunEvent.RetryEnded());
        if (!run.state.waitingForRetry()) {
          // Re-opened, or gone.
          return run.status().isActive();
        }
      }
      long left = run.state.retryDeadlineMillis() - Workflow.currentTimeMillis();
      if (left <= 0) {
        engine.on(
            new RunEvent.WaitOver(
                "run " + run.runId() + ": no retry within its window; its workflow completes"));
        return false;
      }
      if (wakes >= MAX_WAKES_WHILE_ENDED || Workflow.getInfo().isContinueAsNewSuggested()) {
        continueAsNew();
        continue;
      }
      boolean signalled =
          Workflow.await(
              Duration.ofMillis(Math.min(left, ENDED_RUN_LOOK.toMillis())),
              () -> run.state.retryAsked());
      wakes++;
      if (!signalled) {
        // Deleted, or re-opened in its record (revived).
        RunSettings record = run.runs.loadRun(run.ref());
        if (!record.found()) {
          engine.on(
              new RunEvent.WaitOver("run " + run.runId() + " no longer exists; its workflow ends"));
          return false;
        }
        if (record.status().isActive()) {
          engine.on(new RunEvent.RecordReopened(record));
          return true;
        }
      }
    }
  }

  /** Continues as new while the run has ended and waits for a retry (history stays small). */
  private void continueAsNew() {
    // A retry Update waits for the loop's answer: handled first, as a retry signal is.
    Workflow.await(() -> run.state.retryAsked() || Workflow.isEveryHandlerFinished());
    if (run.state.retryAsked()) {
      // Handled first, in this execution.
      return;
    }
    RunCarryOver carry = run.carryOver(false, false, false, run.status());
    log.info("run {}: continuing as new while it waits for a retry", run.runId());
    Workflow.continueAsNew(new RunWorkflowInput(run.runId(), carry));
  }
}
