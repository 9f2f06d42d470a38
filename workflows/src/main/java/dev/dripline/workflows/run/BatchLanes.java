package dev.dripline.workflows.run;

import io.temporal.activity.ActivityOptions;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The run's batches in flight: starts an activity for each batch claimed into a free slot (what to
 * claim and when is {@link LoopRules}'), in its lane (1 to the cap); keeps planning ahead of them;
 * takes their outcomes; and waits for news between the loop's turns. An activity holds one slot and
 * one batch at a time: the batch it was given and then, for up to {@code batch-chain-time}, further
 * pending batches it takes itself (a chain, see BatchExecution). A chained batch that fails comes
 * back as a hand-off and goes on as a batch of its own, with retries.
 */
final class BatchLanes {
  /** How long the workflow waits before claiming again after {@link ClaimResult#slotsFull()}. */
  static final Duration SLOTS_FULL_LOOK = Duration.ofSeconds(1);

  /**
   * A batch activity's outcome as received, waiting to be handled in the workflow's loop; its slot
   * stays held until then.
   */
  private record Completion(BatchRef batch, BatchResult result, RuntimeException failure) {}

  private final RunLedger run;
  private final RunEngine engine;

  /** Outcomes received and not yet handled, in the order they came. */
  private final Deque<Completion> completions = new ArrayDeque<>();

  /** A planning call's outcome, received in the background and handled in the loop. */
  private record Planned(PlanPage page, RuntimeException failure) {}

  /** The outcome of the planning call under way, once received and until handled. */
  private Planned planned;

  private PlanningActivities planning;
  private ActivityOptions batchOptions;

  BatchLanes(RunLedger run, RunEngine engine) {
    this.run = run;
    this.engine = engine;
  }

  /** Makes the activities' options from the run's settings. */
  void configure() {
    RunSettings settings = run.settings();
    RunActivityOptions options =
        RunActivityOptions.of(settings.batchPolicy(), settings.chainMillis());
    batchOptions = options.batch();
    planning = Workflow.newActivityStub(PlanningActivities.class, options.planning());
  }

  /** Starts an activity for {@code batch} in {@code lane}, whose slot the state holds for it. */
  void start(BatchRef batch, int lane) {
    start(batch, lane, batchOptions);
  }

  /**
   * Waits for a completion, a plan page or a request, as {@link LoopRules#waitFor} says, then hands
   * what came to the loop's rules: the planning call's outcome, then the batches' completions.
   */
  void awaitNews() {
    switch (RunTransitions.waitFor(run.state)) {
      case KEEP_AHEAD -> {
        if (!Workflow.await(
            Duration.ofMillis(run.state.window().lookEveryMillis()), this::hasNews)) {
          engine.on(new RunEvent.PlanNext());
        }
      }
      case HELD -> Workflow.await(Duration.ofMillis(run.state.heldLookMillis()), this::hasNews);
      case SLOTS_FULL -> {
        if (!Workflow.await(SLOTS_FULL_LOOK, this::hasNews)) {
          engine.on(new RunEvent.SlotsFullLookOver());
        }
      }
      case NEWS -> Workflow.await(this::hasNews);
    }
    engine.on(new RunEvent.Waited());
    if (planned != null) {
      Planned outcome = planned;
      planned = null;
      engine.on(
          new RunEvent.Planned(
              outcome.page(),
              outcome.failure() == null ? null : RunText.failure(outcome.failure()),
              Workflow.currentTimeMillis()));
    }
    handleCompletions();
  }

  private boolean hasNews() {
    return !completions.isEmpty() || run.state.news() || planned != null;
  }

  /** Starts the planning call {@code request} in the background ({@link PlanRules#planNext}). */
  void startPlanning(PlanRequest request) {
    Async.function(planning::planNextPage, request)
        .handle(
            (page, failure) -> {
              planned = new Planned(page, failure);
              return null;
            });
  }

  private void start(BatchRef batch, int lane, ActivityOptions options) {
    long chainMillis = run.settings().chainMillis();
    String summary =
        "batch "
            + batch.number()
            + " ["
            + batch.startKey()
            + ".."
            + batch.endKey()
            + "]"
            + (chainMillis > 0 ? ", then pending ones, slot " + lane : "");
    BatchActivities activities =
        Workflow.newActivityStub(
            BatchActivities.class, options.toBuilder().setSummary(summary).build());
    Promise<BatchResult> result =
        Async.function(
            activities::processBatch,
            new BatchWork(run.runId(), run.settings().backfill(), batch, lane, chainMillis));
    result.handle(
        (value, failure) -> {
          completions.add(new Completion(batch, value, failure));
          return null;
        });
  }

  /** Hands each completion received to the loop's rules ({@link LoopRules#batchEnded}). */
  private void handleCompletions() {
    if (completions.isEmpty()) {
      return;
    }
    while (!completions.isEmpty()) {
      Completion completion = completions.remove();
      engine.on(
          new RunEvent.BatchEnded(
              completion.batch(),
              completion.result(),
              completion.failure() == null ? null : RunText.failure(completion.failure())));
    }
    run.publishDetails();
  }
}
