package dev.dripline.app.targets;

import dev.dripline.app.catalogue.Catalogue;
import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.problem.ConflictProblem;
import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BoundBody;
import dev.dripline.app.run.PageRequest;
import dev.dripline.app.run.PageResponse;
import dev.dripline.app.targets.TargetRecords.DeletedTarget;
import dev.dripline.app.targets.TargetRecords.QueuedLiveBatch;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.store.targets.TargetReplan;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.data.model.Page;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the targets API does (spec T1, T7, §6.1). PostgreSQL is the record of every target and its
 * live batches; the target's controlling workflow is told through {@link TargetWorkflows} after the
 * record has changed, and polls the record as well, so a lost signal only delays it.
 */
@Singleton
public class TargetService {
  private static final Logger log = LoggerFactory.getLogger(TargetService.class);

  private final TargetRecords targets;
  private final Catalogue catalogue;
  private final TargetWorkflows workflows;

  public TargetService(TargetRecords targets, Catalogue catalogue, TargetWorkflows workflows) {
    this.targets = targets;
    this.catalogue = catalogue;
    this.workflows = workflows;
  }

  /**
   * Registers a target in {@code pending_backfill} (T1) and starts its controlling workflow. If the
   * workflow cannot be started the row is removed again.
   */
  TargetResponse create(BoundBody<CreateTargetRequest> request) {
    NewTarget target = validate(request);
    if (!targets.insert(target)) {
      throw new ConflictProblem("a target named " + target.name() + " exists");
    }
    TargetRow row = find(target.name());
    try {
      workflows.start(row);
    } catch (UnavailableProblem e) {
      targets.deleteUnstarted(target.name());
      throw e;
    }
    return TargetResponse.of(row);
  }

  private NewTarget validate(BoundBody<CreateTargetRequest> bound) {
    CreateTargetRequest request = bound.body();
    List<FieldError> errors = new ArrayList<>(bound.errors());
    Catalogue.Checked checked =
        catalogue.check(request.backfill(), request.options(), bound.hasError("options"), errors);
    PublishedBackfill definition = checked.definition();
    ValidatedOptions options = checked.options();
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return new NewTarget(
        request.name(), definition.name(), options.canonicalJson(), request.group());
  }

  /** The target with its failing flag and blocked live batches. */
  TargetResponse get(String name) {
    return TargetResponse.of(find(name));
  }

  /** A page of targets by name. */
  PageResponse<TargetResponse> list(TargetQuery query) {
    PageRequest paging = query.paging();
    Page<TargetRow> page = targets.list(query.state(), query.group(), paging.page(), paging.size());
    return new PageResponse<>(
        page.getContent().stream().map(TargetResponse::of).toList(),
        paging.page(),
        paging.size(),
        page.getTotalSize());
  }

  /**
   * Queues a live batch behind the target's others, then wakes its workflow (starting it again if
   * it was lost). The row is the truth: a wake that does not arrive is only logged.
   */
  LiveBatchResponse queueLiveBatch(String name, String payloadJson) {
    TargetRow target = find(name);
    QueuedLiveBatch queued =
        targets.queueLiveBatch(name, payloadJson).orElseThrow(() -> NotFoundProblem.target(name));
    workflows.wakeQuietly(target);
    return new LiveBatchResponse(queued.id(), name, "queued", queued.queuedAhead());
  }

  /** What an operator replan would do (T7); changes nothing. */
  ReplanPreview previewReplan(String name) {
    ReplanResult result = targets.previewReplan(name);
    if (!result.found()) {
      throw NotFoundProblem.target(name);
    }
    return new ReplanPreview(
        name,
        true,
        result.previousState().wire(),
        result.previousFailures(),
        result.cancelledRunId(),
        TargetState.PENDING_BACKFILL.wire());
  }

  /**
   * Operator replan (T7): resets the streak and returns the target to {@code pending_backfill} in
   * one transaction; then sends the stop to its active runs (their workflows record it) and wakes
   * the target's workflow. If a stop cannot be sent the replan stands — the run is still the
   * target's, and its next planning attempt sends the stop again — and the 503 says which run to
   * stop.
   */
  ReplanResponse replan(String name) {
    TargetReplan.Replanned replanned = targets.replan(name);
    ReplanResult result = replanned.result();
    if (!result.found()) {
      throw NotFoundProblem.target(name);
    }
    for (RunToStop run : replanned.stopping()) {
      try {
        workflows.stopRun(name, run);
      } catch (UnavailableProblem e) {
        throw new UnavailableProblem(
            "target "
                + name
                + " is replanned, but "
                + e.getMessage()
                + "; stop it with POST /api/runs/"
                + run.runId()
                + "/stop",
            e.getCause());
      }
    }
    targets.find(name).ifPresent(workflows::wakeQuietly);
    return new ReplanResponse(
        name,
        false,
        result.previousState().wire(),
        result.previousFailures(),
        result.cancelledRunId(),
        TargetState.PENDING_BACKFILL.wire());
  }

  /**
   * Deletes a target with its live batches, ends its workflow and stops its runs. The controlling
   * workflow is terminated first, so it does not react to its runs being stopped; then the runs are
   * sent the stop (their workflows record it) — if Temporal cannot take a stop, nothing is deleted
   * (503; the reconciler restarts the target's workflow); then the record goes, and a run begun in
   * between is sent the stop too.
   */
  void delete(String name) {
    find(name);
    workflows.terminateQuietly(name);
    List<RunToStop> stopped = targets.activeRuns(name);
    for (RunToStop run : stopped) {
      workflows.stopRun(name, run);
    }
    DeletedTarget deleted = targets.delete(name).orElseThrow(() -> NotFoundProblem.target(name));
    for (RunToStop run : deleted.stopping()) {
      if (stopped.contains(run)) {
        continue;
      }
      try {
        workflows.stopRun(name, run);
      } catch (UnavailableProblem e) {
        log.warn(
            "target {} deleted, but the stop of its run {} begun meanwhile was not sent: {}",
            name,
            run.runId(),
            e.getMessage());
      }
    }
  }

  private TargetRow find(String name) {
    return targets.find(name).orElseThrow(() -> NotFoundProblem.target(name));
  }
}
