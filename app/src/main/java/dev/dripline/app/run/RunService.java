package dev.dripline.app.run;

import dev.dripline.app.catalogue.Catalogue;
import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.problem.ConflictProblem;
import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.app.problem.UnprocessableProblem;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BoundBody;
import dev.dripline.app.run.RunRecords.Insertion;
import dev.dripline.app.run.RunWorkflows.Signal;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.spi.Key;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.store.pool.PoolRepository;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunRequest;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.CapAnswer;
import dev.dripline.workflows.run.CapPolicy;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RunControl;
import dev.dripline.workflows.run.RunControl.Request;
import dev.dripline.workflows.run.RunStatus;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the runs API does (spec R1–R3, R7–R11). The API creates a run's record and deletes it, and
 * records a pending run's stop request (R2); every other change of a run — status, cap, stop, pause
 * — is its workflow's to make and record, asked through {@link RunWorkflows}. The API reads the
 * record to answer 404 and the 409s the record already decides ({@link RunControl}); the workflow
 * decides again when the request reaches it.
 */
@Singleton
public class RunService {
  private static final Logger log = LoggerFactory.getLogger(RunService.class);

  private final RunRecords runs;
  private final Catalogue catalogue;
  private final RunWorkflows workflows;
  private final DryRuns dryRuns;
  private final EngineConfig engine;
  private final RunHolds holds;
  private final PoolRepository pools;

  public RunService(
      RunRecords runs,
      Catalogue catalogue,
      RunWorkflows workflows,
      DryRuns dryRuns,
      EngineConfig engine,
      RunHolds holds,
      PoolRepository pools) {
    this.runs = runs;
    this.pools = pools;
    this.holds = holds;
    this.dryRuns = dryRuns;
    this.catalogue = catalogue;
    this.workflows = workflows;
    this.engine = engine;
  }

  /**
   * Creates a run and starts its workflow (R1–R3). A repeated {@code Idempotency-Key} returns the
   * run it created, after making sure an active one has its workflow: the request that created it
   * may have died between the insert and the start (F4 in docs/reliability.md), and its client's
   * replay is what brings the run to life. If the workflow cannot be started the row is removed
   * again.
   *
   * @param createdBy the name of the credential that asked, recorded as the run's {@code createdBy}
   */
  CreatedRun create(BoundBody<CreateRunRequest> request, String idempotencyKey, String createdBy) {
    if (idempotencyKey != null) {
      var earlier = runs.findByIdempotencyKey(idempotencyKey);
      if (earlier.isPresent()) {
        return replayed(earlier.get());
      }
    }
    NewRun run = validate(request, idempotencyKey, createdBy);
    Insertion insertion = runs.insert(run);
    if (insertion instanceof Insertion.DuplicateActive) {
      Long existing =
          runs.findActiveDuplicate(run.backfill(), run.optionsJson(), run.maxRecords())
              .orElse(null);
      throw new ConflictProblem(
          "an active run of "
              + run.backfill()
              + " with the same options and maxRecords exists"
              + (existing == null ? "" : ": run " + existing),
          existing);
    }
    if (insertion instanceof Insertion.DuplicateIdempotencyKey) {
      // A concurrent request with the same key won the insert; answer with its run.
      return runs.findByIdempotencyKey(idempotencyKey)
          .map(this::replayed)
          .orElseThrow(() -> new ConflictProblem("Idempotency-Key is being used concurrently"));
    }
    long id = ((Insertion.Inserted) insertion).id();
    RunRow row = runs.find(id).orElseThrow(() -> NotFoundProblem.run(id));
    try {
      workflows.startNew(row);
    } catch (UnavailableProblem e) {
      runs.deleteUnstarted(id);
      throw e;
    }
    return new CreatedRun(view(row), true);
  }

  /**
   * The answer to a repeated key: the original run, whose workflow is started if it is not. The run
   * exists whatever Temporal's state, so an unreachable Temporal does not fail the answer; the next
   * replay (or a worker's reconciler) starts the workflow then.
   */
  private CreatedRun replayed(RunRow earlier) {
    if (earlier.status().isActive()) {
      try {
        workflows.start(earlier);
      } catch (UnavailableProblem e) {
        log.warn(
            "run {}: workflow not ensured for a repeated key: {}", earlier.id(), e.getMessage());
      }
    }
    return new CreatedRun(view(earlier), false);
  }

  private NewRun validate(
      BoundBody<CreateRunRequest> bound, String idempotencyKey, String createdBy) {
    CreateRunRequest request = bound.body();
    List<FieldError> errors = new ArrayList<>(bound.errors());
    Catalogue.Checked checked =
        catalogue.check(request.backfill(), request.options(), bound.hasError("options"), errors);
    PublishedBackfill definition = checked.definition();
    ValidatedOptions options = checked.options();
    // Within int: the request's constraints bound it.
    int batchSize =
        request.batchSize() != null
            ? request.batchSize().intValue()
            : definition == null ? 1 : definition.defaultBatchSize();
    BatchTuning tuning = RunTuning.resolve(bound, definition, batchSize, errors);
    String pool =
        request.pool() != null ? request.pool() : definition == null ? null : definition.pool();
    if (pool != null && !bound.hasError("pool") && pools.find(pool).isEmpty()) {
      errors.add(
          new FieldError(
              "pool",
              (request.pool() != null
                      ? "no pool named " + pool
                      : "backfill "
                          + definition.name()
                          + " draws from pool "
                          + pool
                          + ", which does not exist")
                  + "; create it with PUT /api/pools/"
                  + pool));
    }
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    Integer requestedCap =
        request.maxParallelBatches() == null ? null : request.maxParallelBatches().intValue();
    int cap =
        CapPolicy.effective(definition.maxParallelBatches(), requestedCap, engine.safetyCap());
    return new NewRun(
        definition.name(),
        options.canonicalJson(),
        batchSize,
        request.maxRecords(),
        requestedCap,
        cap,
        request.startAt(),
        createdBy,
        idempotencyKey,
        tuning,
        request.maxFailedBatchesPercent(),
        request.failureBudgetMinBatches() == null
            ? NewRun.DEFAULT_FAILURE_BUDGET_MIN_BATCHES
            : request.failureBudgetMinBatches().intValue(),
        pool,
        request.niceRatio());
  }

  /** Keys a dry run counts at most (K5); beyond, {@code totalKeysExact} is false. */
  static final long DRY_RUN_BOUND = 1_000_000;

  /**
   * A dry run (K5): validated exactly as {@link #create} validates — a 400, or a 409 while an
   * identical run is active —, then planned by a worker that hosts the definition ({@link
   * DryRuns}); nothing is saved, no run's workflow is started.
   *
   * @throws UnprocessableProblem when the definition fails to plan
   */
  DryRunResponse dryRun(BoundBody<CreateRunRequest> request) {
    NewRun run = validate(request, null, null);
    runs.findActiveDuplicate(run.backfill(), run.optionsJson(), run.maxRecords())
        .ifPresent(
            existing -> {
              throw new ConflictProblem(
                  "an active run of "
                      + run.backfill()
                      + " with the same options and maxRecords exists: run "
                      + existing,
                  existing);
            });
    DryRunAnswer answer =
        dryRuns.ask(
            new DryRunRequest(
                run.backfill(),
                run.optionsJson(),
                run.startingBatchSize(),
                run.maxRecords(),
                DRY_RUN_BOUND));
    if (answer.error() != null) {
      throw new UnprocessableProblem(
          "backfill " + run.backfill() + " could not plan this run: " + answer.error());
    }
    return DryRunResponse.of(answer, run.maxParallelBatches(), run.startingBatchSize());
  }

  /** The run with its batch counts and progress. */
  RunResponse get(long id) {
    return view(find(id));
  }

  /** A page of runs, newest first. */
  PageResponse<RunResponse> list(RunQuery query) {
    PageRequest paging = query.paging();
    Page<RunRow> page = runs.list(query.status(), query.backfill(), paging.page(), paging.size());
    Map<Long, Map<BatchStatus, Long>> counts =
        runs.batchCounts(page.items().stream().map(RunRow::id).toList());
    Instant now = Instant.now();
    // Holds are per backfill: read once for each backfill with a running run on the page.
    Map<String, RunThrottleResponse> throttles = new HashMap<>();
    List<RunResponse> items =
        page.items().stream()
            .map(
                run ->
                    RunResponse.of(
                        run,
                        counts.getOrDefault(run.id(), Map.of()),
                        now,
                        throttle(run, backfill -> throttles.computeIfAbsent(backfill, holds::of))))
            .toList();
    return new PageResponse<>(items, paging.page(), paging.size(), page.total());
  }

  /**
   * A page of the run's batches in number order; with a key, the batch that holds it (none or one,
   * found with the batches' indexes, in the order planning cut them in).
   */
  PageResponse<BatchResponse> batches(long id, BatchQuery query) {
    RunRow run = find(id);
    PageRequest paging = query.paging();
    if (query.key() != null) {
      Key key = catalogue.parseKey(run.backfill(), query.key());
      PublishedBackfill definition = catalogue.find(run.backfill()).orElseThrow();
      List<BatchResponse> items =
          runs
              .batchHolding(id, key, definition)
              .filter(batch -> query.status() == null || batch.status() == query.status())
              .map(BatchResponse::of)
              .stream()
              .toList();
      return new PageResponse<>(items, paging.page(), paging.size(), items.size());
    }
    Page<BatchRow> page = runs.batches(id, query.status(), paging.page(), paging.size());
    return new PageResponse<>(
        page.items().stream().map(BatchResponse::of).toList(),
        paging.page(),
        paging.size(),
        page.total());
  }

  /**
   * Stops a run (R7; R2 for a pending one): the {@code stop} signal, with start so that a run whose
   * execution is gone gets one. The workflow records the stop — a pending run ends stopped at once,
   * a live one once its in-flight batches have ended. A signal needs no worker: Temporal keeps it
   * until one runs the workflow. If Temporal cannot be reached nothing is sent (503), except for a
   * pending run, whose stop may not fail (R2): its record keeps the request first, and the run ends
   * stopped when a worker's reconciler delivers the signal or its start time comes, whichever is
   * first ({@code RunRepository.recordStopOfPending}); no batch of it runs.
   */
  void stop(long id) {
    RunRow run = find(id);
    require(id, Request.STOP, run);
    if (run.status() == RunStatus.PENDING && runs.recordStopOfPending(id)) {
      try {
        workflows.signalWithStart(run, Signal.STOP);
      } catch (UnavailableProblem e) {
        log.warn("run {}: stop recorded; its signal waits for Temporal: {}", id, e.getMessage());
      }
      return;
    }
    workflows.signalWithStart(run, Signal.STOP);
  }

  /**
   * Retries a run (R8) through its workflow (the {@code retryRun} Update), which re-queues and
   * answers how many batches it re-queued — or refuses, e.g. while a stop is under way (the stop's
   * finish would stop what it re-queued). What the record already refuses (a completed or stopping
   * run, nothing to re-queue) is a 409 without asking Temporal.
   *
   * @return batches re-queued
   */
  int retry(long id) {
    RunRow run = find(id);
    require(id, Request.RETRY, run);
    Map<BatchStatus, Long> counts = runs.batchCounts(List.of(id)).getOrDefault(id, Map.of());
    if (!RunControl.retryRequeues(
        run.status(),
        run.planDone(),
        counts.getOrDefault(BatchStatus.FAILED, 0L),
        counts.getOrDefault(BatchStatus.STOPPED, 0L))) {
      throw new ConflictProblem(RunControl.nothingToRequeue(id, run.status()));
    }
    RetryAnswer answer = workflows.retry(run);
    if (answer.runGone()) {
      throw NotFoundProblem.run(id);
    }
    if (answer.refusal() != null) {
      throw new ConflictProblem(answer.refusal());
    }
    return answer.requeued();
  }

  /** Pauses a running run (R9). */
  void pause(long id) {
    require(id, Request.PAUSE, find(id));
    if (!workflows.signal(id, Signal.PAUSE)) {
      throw new ConflictProblem("run " + id + " has no running workflow to pause");
    }
  }

  /** Resumes a paused run (R9). */
  void resume(long id) {
    require(id, Request.RESUME, find(id));
    if (!workflows.signal(id, Signal.RESUME)) {
      throw new ConflictProblem("run " + id + " has no running workflow to resume");
    }
  }

  /**
   * Changes a live run's requested cap (R9) through its workflow (the {@code changeCap} Update),
   * which records the cap and answers once it is in the record; the answer is the run as it is
   * then.
   */
  RunResponse changeCap(long id, int maxParallelBatches) {
    RunRow run = find(id);
    require(id, Request.CHANGE_CAP, run);
    CapAnswer answer = workflows.changeCap(run, maxParallelBatches);
    if (answer.runGone()) {
      throw NotFoundProblem.run(id);
    }
    if (answer.refusal() != null) {
      throw new ConflictProblem(answer.refusal());
    }
    return get(id);
  }

  /**
   * Deletes a pending or terminal run and cancels its execution (R10). The request does a constant
   * amount of work: it deletes the run's row, which leaves every list, count and read at once, and
   * records it in {@code run_purges} (a trigger); the purge it then starts removes the run's
   * batches in bounded deletes in the background (docs/design.md "Retention and deletion").
   */
  void delete(long id) {
    if (!runs.deleteIfDeletable(id)) {
      require(id, Request.DELETE, find(id));
      // It ended between the compare-and-set and the read: once more.
      if (!runs.deleteIfDeletable(id)) {
        require(id, Request.DELETE, find(id));
        throw new ConflictProblem("run " + id + " changed while it was being deleted; try again");
      }
    }
    // If Temporal could not be reached, the schedule's next purge takes the batches: triggering
    // it now would wait out a second timeout.
    if (workflows.terminateQuietly(id)) {
      workflows.purgeSoon();
    }
  }

  /** A 409 with the reason if run {@code id}, as {@code run} shows it, refuses {@code request}. */
  private static void require(long id, Request request, RunRow run) {
    RunControl.refusal(id, request, run.status(), run.stopping())
        .ifPresent(
            reason -> {
              throw new ConflictProblem(reason);
            });
  }

  private RunRow find(long id) {
    return runs.find(id).orElseThrow(() -> NotFoundProblem.run(id));
  }

  private RunResponse view(RunRow run) {
    Map<BatchStatus, Long> counts =
        runs.batchCounts(List.of(run.id())).getOrDefault(run.id(), Map.of());
    return RunResponse.of(run, counts, Instant.now(), throttle(run, holds::of));
  }

  /**
   * What holds {@code run}: for a running run, its backfill's holds ({@code holdsOf}) and its spent
   * failure budget; for a paused one, its spent failure budget (it paused itself); else null.
   */
  private static RunThrottleResponse throttle(
      RunRow run, Function<String, RunThrottleResponse> holdsOf) {
    FailureBudgetResponse budget = run.failureBudget();
    boolean budgetSpent = budget != null && budget.spent();
    RunThrottleResponse throttle =
        switch (run.status()) {
          case RUNNING -> holdsOf.apply(run.backfill());
          case PAUSED -> budgetSpent ? RunThrottleResponse.NONE : null;
          default -> null;
        };
    return throttle != null && budgetSpent
        ? throttle.and(budget.reason(), budget.spentAt())
        : throttle;
  }
}
