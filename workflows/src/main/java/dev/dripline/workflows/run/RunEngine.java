package dev.dripline.workflows.run;

import dev.dripline.workflows.run.RunCommand.AnswerCap;
import dev.dripline.workflows.run.RunCommand.AnswerRetries;
import dev.dripline.workflows.run.RunCommand.Claim;
import dev.dripline.workflows.run.RunCommand.Fill;
import dev.dripline.workflows.run.RunCommand.Finish;
import dev.dripline.workflows.run.RunCommand.Log;
import dev.dripline.workflows.run.RunCommand.PublishDetails;
import dev.dripline.workflows.run.RunCommand.PublishStatus;
import dev.dripline.workflows.run.RunCommand.RecordCap;
import dev.dripline.workflows.run.RunCommand.RecordStatus;
import dev.dripline.workflows.run.RunCommand.RecordStop;
import dev.dripline.workflows.run.RunCommand.Requeue;
import dev.dripline.workflows.run.RunCommand.Then;
import dev.dripline.workflows.run.RunCommand.Warn;
import dev.dripline.workflows.run.RunCommand.WithCapLock;
import dev.dripline.workflows.run.RunTransitions.Step;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowLock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * Takes a run's events through {@link RunTransitions}, keeps the state it returns ({@link
 * RunLedger#state}) and carries out its commands, in the workflow's threads: the only place where
 * the run's rules meet Temporal. A command whose answer matters is taken as an event before the
 * next command.
 */
final class RunEngine {
  private static final Logger log = Workflow.getLogger(RunEngine.class);

  private final RunLedger run;

  /**
   * Answers owed to retry Updates, given where the retry they asked for is applied — the same place
   * as a {@code retry} signal's — so that the answer is what the retry did.
   */
  private final List<CompletablePromise<RetryAnswer>> retryAnswers = new ArrayList<>();

  /** Serialises cap changes, so the record ends with the cap this workflow holds last. */
  private final WorkflowLock capLock = Workflow.newWorkflowLock();

  /** The answer to the cap Update being taken (under {@link #capLock}). */
  private CapAnswer capAnswer;

  /** Carries out the commands of the workflow's loop: batches, planning and waits for news. */
  private Consumer<RunCommand> loop = command -> {};

  RunEngine(RunLedger run) {
    this.run = run;
  }

  /** Has {@code loop} carry out the commands this engine leaves to the workflow's loop. */
  void leaveToTheLoop(Consumer<RunCommand> loop) {
    this.loop = loop;
  }

  /** Takes {@code event}: the next state, then its commands carried out in order. */
  void on(RunEvent event) {
    take(event);
  }

  /**
   * Takes an operator's request that came as a signal ({@code event}) and, when it did not come
   * from Dripline ({@link SignalOrigin}), records it in the audit trail as sent by {@code
   * temporal}: accepted, or ignored with the reason the rules gave.
   */
  void signalled(RunEvent event, SignalOrigin origin, String action, String detail) {
    Taken taken = take(event);
    if (SignalOrigin.fromDripline(origin)) {
      return;
    }
    // A request the rules refuse leaves the state as it was and says why in the log.
    String ignored = null;
    if (taken.step().state().equals(taken.from())) {
      for (RunCommand command : taken.step().commands()) {
        if (command instanceof Log l) {
          ignored = l.message();
        } else if (command instanceof Warn w) {
          ignored = w.message();
        }
      }
    }
    audit(action, ignored == null ? "accepted" : "ignored", ignored, detail);
  }

  /**
   * Records an Update the workflow has answered ({@code retryRun}, {@code changeCap}) in the audit
   * trail as sent by {@code temporal}, when it did not come from Dripline: accepted, or rejected
   * with the answer's refusal.
   */
  void updated(SignalOrigin origin, String action, String detail, String refusal) {
    if (SignalOrigin.fromDripline(origin)) {
      return;
    }
    audit(action, refusal == null ? "accepted" : "rejected", refusal, detail);
  }

  private void audit(String action, String outcome, String problem, String detail) {
    run.runs.recordAudit(
        new AuditRecord(
            RunWorkflowIds.runIdOf(Workflow.getInfo().getWorkflowId()),
            action,
            outcome,
            problem,
            detail,
            Workflow.getInfo().getRunId() + "/" + Workflow.randomUUID()));
  }

  /** An event taken: the state it was taken in, and the step the rules made of it. */
  private record Taken(RunState from, Step step) {}

  private Taken take(RunEvent event) {
    RunState from = run.state;
    Step step = RunTransitions.on(from, event);
    run.state = step.state();
    for (RunCommand command : step.commands()) {
      execute(command);
    }
    return new Taken(from, step);
  }

  /**
   * What the workflow knows now that the run's state does not: Temporal's advice, the time, its
   * handlers and the retry Updates waiting for an answer.
   */
  RunEvent.Facts facts() {
    return new RunEvent.Facts(
        Workflow.getInfo().isContinueAsNewSuggested(),
        Workflow.currentTimeMillis(),
        Workflow.isEveryHandlerFinished(),
        retryAnswersOwed());
  }

  /** A retry whose caller waits for what it did: answered where the retry is applied. */
  RetryAnswer retryAndAnswer() {
    CompletablePromise<RetryAnswer> answer = Workflow.newPromise();
    retryAnswers.add(answer);
    on(new RunEvent.Retry());
    return answer.get();
  }

  boolean retryAnswersOwed() {
    return !retryAnswers.isEmpty();
  }

  /** Gives every Update waiting for a retry's outcome {@code answer}. */
  void answerRetries(RetryAnswer answer) {
    for (CompletablePromise<RetryAnswer> waiting : retryAnswers) {
      waiting.complete(answer);
    }
    retryAnswers.clear();
  }

  /**
   * A cap change by Update, taken once the run is loaded: applied and recorded before answering.
   */
  CapAnswer changeCap(int maxParallelBatches) {
    Workflow.await(
        () -> run.state.window() != null || (run.settings() != null && !run.state.found()));
    capLock.lock();
    try {
      capAnswer = null;
      on(new RunEvent.CapUpdate(maxParallelBatches));
      return capAnswer;
    } finally {
      capLock.unlock();
    }
  }

  /** Rejects an Update its caller no longer waits for: applied now, it would be applied unseen. */
  static void rejectIfLate(Long answerByMillis) {
    if (answerByMillis != null && Workflow.currentTimeMillis() > answerByMillis) {
      throw new IllegalStateException(
          "the request arrived after its caller stopped waiting ("
              + Instant.ofEpochMilli(answerByMillis)
              + "); nothing was changed");
    }
  }

  private void execute(RunCommand command) {
    if (command instanceof Log l) {
      log.info(l.message());
    } else if (command instanceof Warn w) {
      log.warn(w.message());
    } else if (command instanceof RecordStop) {
      run.runs.recordStopRequested(run.ref());
    } else if (command instanceof RecordStatus r) {
      run.runs.recordStatus(new StatusChange(run.runId(), r.status()));
    } else if (command instanceof RecordCap r) {
      run.runs.recordCap(new CapRecord(run.runId(), r.requestedCap(), r.effectiveCap()));
    } else if (command instanceof Requeue r) {
      RequeueResult result = run.runs.requeue(run.requeueRequest(r.token()));
      on(
          r.ended()
              ? new RunEvent.EndedRequeued(result)
              : new RunEvent.Requeued(result, r.before()));
    } else if (command instanceof AnswerRetries a) {
      answerRetries(a.answer());
    } else if (command instanceof AnswerCap a) {
      capAnswer = a.answer();
    } else if (command instanceof PublishStatus) {
      run.publishStatus();
    } else if (command instanceof PublishDetails) {
      run.publishDetails();
    } else if (command instanceof WithCapLock w) {
      capLock.lock();
      try {
        on(w.event());
      } finally {
        capLock.unlock();
      }
    } else if (command instanceof Then t) {
      on(t.event());
    } else if (command instanceof Claim c) {
      ClaimResult claim = run.runs.claimPending(new ClaimRequest(run.runId(), c.token(), c.free()));
      on(new RunEvent.Claimed(claim, c.free()));
    } else if (command instanceof Fill) {
      on(new RunEvent.FillSlots(facts()));
    } else if (command instanceof Finish f) {
      FinishResult finish =
          run.runs.finish(new FinishRequest(run.runId(), f.stopping(), run.state.window().error()));
      on(new RunEvent.Finished(finish));
    } else if (command instanceof RunCommand.RecordBatchFailure f) {
      run.runs.recordBatchFailure(new BatchFailure(run.runId(), f.batch(), f.error()));
    } else if (command instanceof RunCommand.PlanNextPage) {
      on(new RunEvent.PlanNext());
    } else if (command instanceof RunCommand.RecoverSlots) {
      on(new RunEvent.SlotsRecovered(run.runs.recoverSlots(run.ref())));
    } else if (command instanceof RunCommand.RecoverOrphanSlots) {
      run.runs.recoverSlots(run.ref());
    } else if (command instanceof RunCommand.Sleep s) {
      Workflow.sleep(Duration.ofMillis(s.millis()));
    } else if (command instanceof RunCommand.LoadRun) {
      on(new RunEvent.Loaded(run.runs.loadRun(run.ref())));
    } else if (command instanceof RunCommand.MarkRunning) {
      on(new RunEvent.MarkedRunning(run.runs.markRunning(run.ref())));
    } else if (command instanceof RunCommand.StopBeforeStart) {
      on(
          new RunEvent.StoppedBeforeStart(
              run.runs.finish(new FinishRequest(run.runId(), true, null))));
    } else if (command instanceof RunCommand.LoadRecord) {
      on(new RunEvent.RecordRead(run.runs.loadRun(run.ref())));
    } else if (command instanceof RunCommand.AwaitRetry) {
      on(new RunEvent.EndedWaitBegins(Workflow.currentTimeMillis()));
    } else if (command instanceof RunCommand.HandOverIfDue) {
      on(new RunEvent.HandOverLook(facts()));
    } else if (command instanceof RunCommand.Await a) {
      Supplier<Boolean> woken = () -> RunTransitions.woken(a.until(), run.state, facts());
      boolean news = true;
      if (a.timeoutMillis() > 0) {
        news = Workflow.await(Duration.ofMillis(a.timeoutMillis()), woken);
      } else {
        Workflow.await(woken);
      }
      on(new RunEvent.Woke(a.until(), news, facts()));
    } else if (command instanceof RunCommand.ContinueAsNew c) {
      Workflow.continueAsNew(new RunWorkflowInput(run.runId(), c.carry()));
    } else {
      loop.accept(command);
    }
  }
}
