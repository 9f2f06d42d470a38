package dev.dripline.app.run;

import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.retention.PurgeSchedule;
import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.CapAnswer;
import dev.dripline.workflows.run.CapUpdate;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RetryRequest;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.RunWorkflowStart;
import dev.dripline.workflows.run.SignalOrigin;
import io.temporal.api.enums.v1.TaskQueueType;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.taskqueue.v1.TaskQueue;
import io.temporal.api.workflowservice.v1.DescribeTaskQueueRequest;
import io.temporal.api.workflowservice.v1.DescribeTaskQueueResponse;
import io.temporal.client.BatchRequest;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateHandle;
import io.temporal.client.WorkflowUpdateStage;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.text.NumberFormat;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API's only contact with Temporal: starting, signalling, updating and terminating run
 * workflows. A Temporal failure surfaces as {@link UnavailableProblem}; a workflow that is not
 * running is reported to the caller, who decides whether that matters.
 *
 * <p>Signals ({@code stop}, {@code pause}, {@code resume}) need Temporal only: the workflow takes
 * them when a worker runs it. Updates ({@code retryRun}, {@code changeCap}) need a worker to
 * answer: they are sent only when a worker polls the task queue, and carry the instant the API
 * stops waiting, after which the workflow rejects them unapplied — a 503 leaves nothing behind.
 */
@Singleton
public class RunWorkflows {
  private static final Logger log = LoggerFactory.getLogger(RunWorkflows.class);

  /** A worker whose last poll is older than this is taken as gone (a poll lasts up to a minute). */
  static final Duration WORKER_SEEN_WITHIN = Duration.ofSeconds(90);

  private static final Duration WORKER_CHECK_DEADLINE = Duration.ofSeconds(5);

  /** Beyond the Update's deadline, for an answer given just before it to reach the API. */
  private static final Duration ANSWER_GRACE = Duration.ofSeconds(3);

  /** How long an accepted Update's outcome is waited for: the workflow's own database work. */
  static final Duration OUTCOME_WAIT = Duration.ofSeconds(30);

  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final PurgeSchedule purge;

  /** Threads that wait for Updates' answers, so that the wait can be bounded. */
  private final ExecutorService updates =
      Executors.newCachedThreadPool(
          runnable -> {
            Thread thread = new Thread(runnable, "dripline-run-update");
            thread.setDaemon(true);
            return thread;
          });

  public RunWorkflows(WorkflowClient client, TemporalConfig temporal, PurgeSchedule purge) {
    this.client = client;
    this.temporal = temporal;
    this.purge = purge;
  }

  @PreDestroy
  void close() {
    updates.shutdownNow();
  }

  /**
   * A signal of {@link BackfillRunWorkflow} the API sends, naming the API as its origin: the API
   * records its actions in the audit trail itself, so the workflow does not.
   */
  enum Signal {
    STOP,
    PAUSE,
    RESUME;

    void sendTo(BackfillRunWorkflow stub) {
      switch (this) {
        case STOP -> stub.stop(SignalOrigin.API);
        case PAUSE -> stub.pause(SignalOrigin.API);
        case RESUME -> stub.resume(SignalOrigin.API);
      }
    }

    void addTo(BatchRequest batch, BackfillRunWorkflow stub) {
      switch (this) {
        case STOP -> batch.add(stub::stop, SignalOrigin.API);
        case PAUSE -> batch.add(stub::pause, SignalOrigin.API);
        case RESUME -> batch.add(stub::resume, SignalOrigin.API);
      }
    }
  }

  /**
   * Starts the workflow of a run, or leaves its running execution alone ({@code USE_EXISTING}): a
   * replayed {@code Idempotency-Key} makes sure the run it returns has a workflow (the request that
   * created it may have died between the insert and the start), and must not fail the original
   * request's start when it got there first.
   */
  void start(RunRow run) {
    BackfillRunWorkflow stub =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            options(run, RunStatus.PENDING).toBuilder()
                .setWorkflowIdConflictPolicy(
                    WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
                .build());
    try {
      WorkflowClient.start(stub::run, RunWorkflowInput.fresh(run.id()));
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not start the workflow of run " + run.id() + " (Temporal: " + reason(e) + ")", e);
    }
  }

  /**
   * Starts the workflow of a run this request has just recorded. An open execution under its
   * workflow id cannot be this run's (the reconciler leaves records younger than a minute alone):
   * it was left by an earlier database whose run had the same id — restored from a backup, or
   * recreated beside a Temporal server that kept its executions. Attaching to it ({@code
   * USE_EXISTING}) would leave the new run pending for good, its workflow driving a run that no
   * longer exists; that execution is terminated instead, and the new one started.
   */
  void startNew(RunRow run) {
    WorkflowOptions options = options(run, RunStatus.PENDING);
    try {
      try {
        WorkflowClient.start(
            client.newWorkflowStub(BackfillRunWorkflow.class, options)::run,
            RunWorkflowInput.fresh(run.id()));
      } catch (WorkflowExecutionAlreadyStarted e) {
        log.warn(
            "run {}: terminating execution {} of {}, left by an earlier run with this id",
            run.id(),
            e.getExecution().getRunId(),
            options.getWorkflowId());
        WorkflowClient.start(
            client.newWorkflowStub(
                    BackfillRunWorkflow.class,
                    options.toBuilder()
                        .setWorkflowIdConflictPolicy(
                            WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING)
                        .build())
                ::run,
            RunWorkflowInput.fresh(run.id()));
      }
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not start the workflow of run " + run.id() + " (Temporal: " + reason(e) + ")", e);
    }
  }

  /**
   * Sends {@code signal} to the run's workflow, starting a new execution of the same id first if
   * none is running — how a retry revives an ended run, and how a stop reaches a run whose
   * execution was lost. A new execution reads the run's record, so it is harmless when the run has
   * meanwhile ended.
   */
  void signalWithStart(RunRow run, Signal signal) {
    BackfillRunWorkflow stub =
        client.newWorkflowStub(BackfillRunWorkflow.class, options(run, RunStatus.RUNNING));
    try {
      ClosingRetry.call(
          () -> {
            BatchRequest batch = client.newSignalWithStartRequest();
            batch.add(stub::run, RunWorkflowInput.fresh(run.id()));
            signal.addTo(batch, stub);
            return client.signalWithStart(batch);
          });
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not signal "
              + signal.name().toLowerCase(Locale.ROOT)
              + " to run "
              + run.id()
              + " (Temporal: "
              + reason(e)
              + ")",
          e);
    }
  }

  /**
   * Sends {@code signal} to the run's running workflow.
   *
   * @return false if no execution is running
   */
  boolean signal(long runId, Signal signal) {
    return send(runId, signal.name().toLowerCase(Locale.ROOT), signal::sendTo);
  }

  /**
   * Asks the run's workflow to retry the run (the {@code retryRun} Update), starting an execution
   * if none is running — how a retry revives a run whose workflow has closed.
   */
  RetryAnswer retry(RunRow run) {
    return update(
        run,
        "retry",
        (stub, answerBy) ->
            WorkflowClient.startUpdateWithStart(
                stub::retryRun,
                new RetryRequest(answerBy, SignalOrigin.API),
                UpdateOptions.<RetryAnswer>newBuilder()
                    .setWaitForStage(WorkflowUpdateStage.ACCEPTED)
                    .build(),
                new WithStartWorkflowOperation<>(stub::run, RunWorkflowInput.fresh(run.id()))));
  }

  /**
   * Asks the run's workflow to change its requested cap (the {@code changeCap} Update); the answer
   * comes once the cap is in the run's record.
   */
  CapAnswer changeCap(RunRow run, int maxParallelBatches) {
    return update(
        run,
        "cap change",
        (stub, answerBy) ->
            WorkflowClient.startUpdateWithStart(
                stub::changeCap,
                new CapUpdate(maxParallelBatches, answerBy, SignalOrigin.API),
                UpdateOptions.<CapAnswer>newBuilder()
                    .setWaitForStage(WorkflowUpdateStage.ACCEPTED)
                    .build(),
                new WithStartWorkflowOperation<>(stub::run, RunWorkflowInput.fresh(run.id()))));
  }

  /**
   * Sends an Update, with start, and waits until the workflow has accepted it for at most {@link
   * TemporalConfig#updateTimeout()} (and a little more, for the answer to travel) — the Update
   * carries that deadline, so a worker that sees it later rejects it unapplied: nothing was changed
   * — and then for its outcome, for at most {@link #OUTCOME_WAIT}: accepted, it is the workflow's
   * to finish (it waits for PostgreSQL if it must), and a 503 then says so.
   */
  private <R> R update(
      RunRow run,
      String what,
      BiFunction<BackfillRunWorkflow, Long, WorkflowUpdateHandle<R>> send) {
    requireWorker(what, run.id());
    BackfillRunWorkflow stub =
        client.newWorkflowStub(
            BackfillRunWorkflow.class,
            options(run, run.status()).toBuilder()
                .setWorkflowIdConflictPolicy(
                    WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
                .build());
    long answerBy = System.currentTimeMillis() + temporal.updateTimeout().toMillis();
    Future<WorkflowUpdateHandle<R>> accepted =
        updates.submit(() -> ClosingRetry.call(() -> send.apply(stub, answerBy)));
    WorkflowUpdateHandle<R> handle = accepted(run, what, accepted);
    try {
      return handle.getResultAsync().get(OUTCOME_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new UnavailableProblem(
          "the workflow of run "
              + run.id()
              + " accepted the "
              + what
              + " but had not finished it after "
              + OUTCOME_WAIT.toSeconds()
              + " s (is PostgreSQL reachable?); it finishes it when it can",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableProblem("interrupted while waiting for run " + run.id(), e);
    } catch (ExecutionException e) {
      throw unavailable(run, what, e);
    }
  }

  /** The handle of an Update the workflow accepted, or a 503 saying why there is none. */
  private <R> WorkflowUpdateHandle<R> accepted(
      RunRow run, String what, Future<WorkflowUpdateHandle<R>> answer) {
    try {
      return answer.get(
          temporal.updateTimeout().plus(ANSWER_GRACE).toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      answer.cancel(true);
      throw new UnavailableProblem(
          "the workflow of run "
              + run.id()
              + " did not answer the "
              + what
              + " within "
              + temporal.updateTimeout().toSeconds()
              + " s; nothing was changed",
          e);
    } catch (InterruptedException e) {
      answer.cancel(true);
      Thread.currentThread().interrupt();
      throw new UnavailableProblem("interrupted while waiting for run " + run.id(), e);
    } catch (ExecutionException e) {
      throw unavailable(run, what, e);
    }
  }

  private static UnavailableProblem unavailable(RunRow run, String what, ExecutionException e) {
    RuntimeException cause =
        e.getCause() instanceof RuntimeException runtime
            ? runtime
            : new IllegalStateException(e.getCause());
    return new UnavailableProblem(
        "could not ask the workflow of run "
            + run.id()
            + " for the "
            + what
            + " (Temporal: "
            + reason(cause)
            + ")",
        cause);
  }

  /**
   * Refuses (503) unless a worker has polled the task queue lately: an Update waits for a worker,
   * and without one it would only time out. A poll lasts up to a minute, so a worker polled within
   * {@link #WORKER_SEEN_WITHIN} is taken as live.
   */
  private void requireWorker(String what, long runId) {
    DescribeTaskQueueResponse queue;
    try {
      queue =
          client
              .getWorkflowServiceStubs()
              .blockingStub()
              .withDeadlineAfter(WORKER_CHECK_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
              .describeTaskQueue(
                  DescribeTaskQueueRequest.newBuilder()
                      .setNamespace(temporal.namespace())
                      .setTaskQueue(TaskQueue.newBuilder().setName(temporal.taskQueue()))
                      .setTaskQueueType(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)
                      .build());
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not ask Temporal for the "
              + what
              + " of run "
              + runId
              + " (Temporal: "
              + reason(e)
              + "); nothing was changed",
          e);
    }
    long seenAfter = System.currentTimeMillis() - WORKER_SEEN_WITHIN.toMillis();
    boolean live =
        queue.getPollersList().stream()
            .anyMatch(poller -> poller.getLastAccessTime().getSeconds() * 1_000 > seenAfter);
    if (!live) {
      throw new UnavailableProblem(
          "no Dripline worker polls task queue "
              + temporal.taskQueue()
              + " to answer the "
              + what
              + " of run "
              + runId
              + "; nothing was changed",
          null);
    }
  }

  /**
   * Starts the purge now, which removes a deleted run's batches in bounded deletes; one not started
   * (Temporal unreachable) runs at the purge schedule's next time.
   */
  void purgeSoon() {
    purge.triggerSoon();
  }

  /**
   * Terminates the run's execution, if any; a missing or closed one is fine.
   *
   * @return whether Temporal answered (false: it could not be reached, nothing was terminated)
   */
  boolean terminateQuietly(long runId) {
    try {
      client.newUntypedWorkflowStub(RunWorkflowIds.forRun(runId)).terminate("run deleted");
      return true;
    } catch (WorkflowNotFoundException e) {
      // Already closed or never started: nothing to cancel.
      return true;
    } catch (RuntimeException e) {
      // The record is gone; an execution left behind finds no run and ends by itself.
      log.warn("run {}: could not terminate its workflow: {}", runId, reason(e));
      return false;
    }
  }

  private boolean send(long runId, String name, Consumer<BackfillRunWorkflow> call) {
    BackfillRunWorkflow stub =
        client.newWorkflowStub(BackfillRunWorkflow.class, RunWorkflowIds.forRun(runId));
    try {
      ClosingRetry.call(
          () -> {
            call.accept(stub);
            return null;
          });
      return true;
    } catch (WorkflowNotFoundException e) {
      return false;
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not signal " + name + " to run " + runId + " (Temporal: " + reason(e) + ")", e);
    }
  }

  private WorkflowOptions options(RunRow run, RunStatus status) {
    return RunWorkflowStart.options(run.id(), temporal.taskQueue(), run.backfill(), status, null)
        .setStaticSummary(summary(run))
        .setStaticDetails(details(run))
        .build();
  }

  /**
   * The one-line summary the Web UI shows, e.g. "example.sleep · batch size 10 · cap 3"; a tuned
   * run's (P4) adds e.g. "· tuned to PT2S per batch, 10–5,000 keys", a paced one e.g. "· nice ratio
   * 0.5".
   */
  static String summary(RunRow run) {
    NumberFormat number = NumberFormat.getIntegerInstance(Locale.US);
    StringBuilder text =
        new StringBuilder(run.backfill())
            .append(" · batch size ")
            .append(number.format(run.batchSize()))
            .append(" · cap ")
            .append(number.format(run.maxParallelBatches()));
    if (run.maxRecords() != null) {
      text.append(" · ").append(number.format(run.maxRecords())).append(" keys max");
    }
    if (run.targetBatchMillis() != null) {
      text.append(" · tuned to ")
          .append(Duration.ofMillis(run.targetBatchMillis()))
          .append(" per batch, ")
          .append(number.format(run.minBatchSize()))
          .append("–")
          .append(number.format(run.maxBatchSize()))
          .append(" keys");
    }
    if (run.niceRatio() > 0) {
      NumberFormat ratio = NumberFormat.getNumberInstance(Locale.US);
      ratio.setMaximumFractionDigits(3);
      text.append(" · nice ratio ").append(ratio.format(run.niceRatio()));
    }
    return text.toString();
  }

  /** Markdown details the Web UI shows: the run's options and schedule. */
  static String details(RunRow run) {
    StringBuilder text = new StringBuilder("Run ").append(run.id()).append(" of `");
    text.append(run.backfill()).append("`\n\nOptions:\n");
    if (run.options().isEmpty()) {
      text.append("- (none)\n");
    }
    for (Map.Entry<String, Object> option : run.options().entrySet()) {
      text.append("- ")
          .append(option.getKey())
          .append(" = ")
          .append(option.getValue())
          .append('\n');
    }
    if (run.startAt() != null) {
      text.append("\nStarts at ").append(run.startAt()).append('\n');
    }
    return text.toString();
  }

  private static String reason(RuntimeException e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return String.valueOf(cause.getMessage());
  }
}
