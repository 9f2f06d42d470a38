package dev.dripline.app.run;

import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.CompletionPoint;
import dev.dripline.store.run.ProgressAtEdge;
import dev.dripline.store.run.ProgressSampleRepository;
import io.micronaut.core.annotation.Nullable;
import jakarta.inject.Singleton;
import java.time.Instant;
import java.util.List;

/**
 * The runs API's operations for the dashboard ({@code dev.dripline.app.ui}): the same {@link
 * RunService} and {@link RunRequests} calls the {@link RunController} makes, so a page shows the
 * API's figures and refuses what the API refuses with the API's words.
 */
@Singleton
public class RunDesk {
  private final RunService service;
  private final RunRequests requests;
  private final BatchRepository batches;
  private final ProgressSampleRepository samples;

  public RunDesk(
      RunService service,
      RunRequests requests,
      BatchRepository batches,
      ProgressSampleRepository samples) {
    this.service = service;
    this.requests = requests;
    this.batches = batches;
    this.samples = samples;
  }

  /** {@code GET /api/runs?status=&backfill=&page=&size=}; pages count from 0, as the API's. */
  public PageResponse<RunResponse> list(
      @Nullable String status, @Nullable String backfill, int page, int size) {
    return service.list(
        requests.runQuery(List.of(), status, backfill, String.valueOf(page), String.valueOf(size)));
  }

  /** {@code GET /api/runs/{id}}. */
  public RunResponse get(long id) {
    return service.get(id);
  }

  /** {@code GET /api/runs/{id}/batches?status=&page=&size=}; pages count from 0. */
  public PageResponse<BatchResponse> batches(long id, @Nullable String status, int page, int size) {
    return service.batches(
        id,
        requests.batchQuery(List.of(), status, String.valueOf(page), String.valueOf(size), null));
  }

  /**
   * When the run's last completed batches (at most {@code limit}, the highest-numbered) finished,
   * and their sizes: a bounded index read, for a chart of its recent throughput.
   */
  public List<CompletionPoint> recentCompletions(long id, int limit) {
    service.get(id);
    return batches.recentCompletions(id, limit);
  }

  /**
   * Run {@code id}'s progress at {@code edges} instants {@code first}, {@code first + stepMillis},
   * …, each its latest progress sample at or before it: one index probe per edge, for a chart of
   * its throughput over its whole life.
   */
  public List<ProgressAtEdge> progressAtEdges(long id, Instant first, long stepMillis, int edges) {
    return samples.atEdges(id, first, stepMillis, edges);
  }

  /** {@code POST /api/runs?dryRun=true} with {@code body}. */
  public DryRunResponse dryRun(String body) {
    return service.dryRun(requests.create(body, null));
  }

  /** {@code POST /api/runs} with {@code body}; the new run's id. */
  public long create(String body, String createdBy) {
    return service.create(requests.create(body, null), null, createdBy).run().id();
  }

  /** {@code POST /api/runs/{id}/stop}. */
  public void stop(long id) {
    service.stop(id);
  }

  /** {@code POST /api/runs/{id}/pause}. */
  public void pause(long id) {
    service.pause(id);
  }

  /** {@code POST /api/runs/{id}/resume}. */
  public void resume(long id) {
    service.resume(id);
  }

  /** {@code POST /api/runs/{id}/retry}; the batches re-queued. */
  public int retry(long id) {
    return service.retry(id);
  }

  /** {@code PATCH /api/runs/{id}} with {@code body} ({@code {"maxParallelBatches": n}}). */
  public RunResponse changeCap(long id, String body) {
    return service.changeCap(id, requests.capChange(body));
  }

  /** {@code DELETE /api/runs/{id}}. */
  public void delete(long id) {
    service.delete(id);
  }

  /** A run id from a path, as the API reads it; anything else is a 404. */
  public static long runId(String text) {
    return RunRequests.runId(text).orElseThrow(() -> NotFoundProblem.run(text));
  }
}
