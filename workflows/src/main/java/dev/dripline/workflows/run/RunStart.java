package dev.dripline.workflows.run;

import static dev.dripline.workflows.run.RunWorkflowVersions.PAUSE_WHILE_PENDING;

import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * A pending run's start: at its {@code startAt} (R2), unless a stop comes first, which ends the run
 * before it started, or it is paused, when it waits past its start until resumed (R9). A retry
 * meanwhile is answered at once: a pending run has no batches yet.
 */
final class RunStart {
  private static final Logger log = Workflow.getLogger(RunStart.class);

  private final RunLedger run;
  private final RunEngine engine;
  private final EndedRunWait ended;

  RunStart(RunLedger run, RunEngine engine, EndedRunWait ended) {
    this.run = run;
    this.engine = engine;
    this.ended = ended;
  }

  /**
   * Starts a pending run at its start time, or ends it if a stop came first.
   *
   * @return null if the run goes on into the loop, else the workflow's outcome
   */
  RunOutcome await() {
    run.publishStatus();
    if (!awaitStartTime()) {
      // Stopped before it started.
      FinishResult finish = run.runs.finish(new FinishRequest(run.runId(), true, null));
      engine.on(
          new RunEvent.Ended(
              finish.status() == null ? RunStatus.STOPPED : finish.status(), finish));
      boolean reopened =
          finish.status() != null && engine.waitsForRetry(run.status()) && ended.await();
      return reopened ? null : outcome(run.status());
    }
    StartResult start = run.runs.markRunning(run.ref());
    if (start.started()) {
      engine.on(new RunEvent.Started(start.startedAt()));
      return null;
    }
    log.info("run {} did not start: it is {}", run.runId(), start.status());
    if (start.status() == null || !engine.waitsForRetry(start.status())) {
      return outcome(start.status());
    }
    engine.on(new RunEvent.Ended(start.status(), null));
    return ended.await() ? null : outcome(run.status());
  }

  private RunOutcome outcome(RunStatus status) {
    return new RunOutcome(status, run.state.counts().processedKeys());
  }

  /**
   * Waits until {@code startAt}, and while paused (R9: a pending run is paused from its creation
   * and then waits past its start time until resumed); false if a stop came first.
   */
  private boolean awaitStartTime() {
    boolean pausable = engine.has(PAUSE_WHILE_PENDING);
    while (!run.state.stopping()) {
      if (pausable) {
        engine.on(new RunEvent.PendingPauseAsked());
      }
      long waitMillis =
          run.settings().startAt() == null
              ? 0
              : run.settings().startAt().toEpochMilli() - Workflow.currentTimeMillis();
      boolean held = pausable && run.state.paused();
      if (waitMillis <= 0 && !held) {
        break;
      }
      Supplier<Boolean> news =
          () ->
              run.state.stopping()
                  || engine.retryAnswersOwed()
                  || pausable && run.state.later().pause() != null;
      if (waitMillis > 0) {
        Workflow.await(Duration.ofMillis(waitMillis), news);
      } else {
        Workflow.await(news);
      }
      if (engine.retryAnswersOwed()) {
        // A pending run has no batches yet.
        engine.on(new RunEvent.PendingRetryRefused());
      }
    }
    return !run.state.stopping();
  }
}
