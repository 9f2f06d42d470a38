package dev.dripline.app.ui;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.catalogue.Catalogue;
import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.run.BatchResponse;
import dev.dripline.app.run.PageResponse;
import dev.dripline.app.run.RunDesk;
import dev.dripline.app.run.RunResponse;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.store.audit.AuditEventRepository;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.workflows.run.RunStatus;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.model.Pageable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.swagger.v3.oas.annotations.Hidden;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The dashboard's runs: the list, one run with its controls, and the controls' POSTs. Every figure
 * and every refusal comes from {@link RunDesk}, i.e. the runs API's own service: a control the API
 * refuses is refused here with the API's detail and status, and nothing is done.
 */
@Requires(notEnv = "worker")
@Produces(MediaType.TEXT_HTML)
@Hidden // the dashboard's pages are not the API: not in /openapi.yml
@Controller(UiFilter.ROOT + "/runs")
@ExecuteOn(TaskExecutors.BLOCKING)
public class UiRunsController {
  /** Runs per page of the list. */
  static final int RUNS_PER_PAGE = 25;

  /** Failed batches per page of a run. */
  static final int FAILED_PER_PAGE = 10;

  /** The audit entries a run's page shows, its newest. */
  static final int AUDIT_ENTRIES = 20;

  /** What a control's redirect may say it did, by its key. */
  private static final Map<String, String> NOTICES =
      Map.of(
          "started", "Run started.",
          "stop", "Stop requested: the run ends once its in-flight batches have ended.",
          "pause", "Pause requested.",
          "resume", "Resume requested.",
          "retry", "Retry requested: its failed and stopped batches are queued again.",
          "cap", "Cap changed.",
          "deleted", "Run deleted.");

  private final RunDesk runs;
  private final Catalogue catalogue;
  private final UiPages pages;
  private final UiForms forms;
  private final TemporalConfig temporal;
  private final AuditEventRepository audit;
  private final RunThroughput throughput;

  public UiRunsController(
      RunDesk runs,
      Catalogue catalogue,
      UiPages pages,
      UiForms forms,
      TemporalConfig temporal,
      AuditEventRepository audit,
      RunThroughput throughput) {
    this.audit = audit;
    this.throughput = throughput;
    this.runs = runs;
    this.catalogue = catalogue;
    this.pages = pages;
    this.forms = forms;
    this.temporal = temporal;
  }

  @Get
  public HttpResponse<?> list(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @QueryValue @Nullable String status,
      @QueryValue @Nullable String backfill,
      @QueryValue @Nullable Integer page,
      @QueryValue @Nullable String notice) {
    int number = page == null || page < 1 ? 1 : page;
    Map<String, Object> values = new HashMap<>();
    values.put("status", status == null ? "" : status);
    values.put("backfill", backfill == null ? "" : backfill);
    values.put(
        "statuses",
        Arrays.stream(RunStatus.values()).map(s -> s.name().toLowerCase(Locale.ROOT)).toList());
    values.put("backfills", catalogue.all().stream().map(PublishedBackfill::name).toList());
    values.put("notice", NOTICES.getOrDefault(notice == null ? "" : notice, ""));
    values.put("fmt", UiFormat.INSTANCE);
    HttpStatus answer = HttpStatus.OK;
    try {
      PageResponse<RunResponse> found = runs.list(status, backfill, number - 1, RUNS_PER_PAGE);
      values.put("runs", found.items());
      values.put("pager", Pager.of(number, RUNS_PER_PAGE, found.total(), query(status, backfill)));
      values.put("error", "");
    } catch (ProblemException e) {
      answer = HttpStatus.valueOf(e.toProblem().status());
      values.put("runs", List.of());
      values.put("pager", Pager.of(1, RUNS_PER_PAGE, 0, ""));
      values.put("error", e.getMessage());
    }
    return UiPages.page(answer, "runs", pages.model("Runs", "runs", session, values));
  }

  @Get("/{id}")
  public HttpResponse<?> run(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @PathVariable String id,
      @QueryValue @Nullable Integer failedPage,
      @QueryValue @Nullable String notice) {
    long runId = runId(id, session);
    return runPage(
        session,
        runId,
        failedPage,
        HttpStatus.OK,
        NOTICES.getOrDefault(notice == null ? "" : notice, ""),
        "");
  }

  @Post("/{id}/stop")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.stop", run = "id")
  public HttpResponse<?> stop(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    return act(request, id, form, "stop");
  }

  @Post("/{id}/pause")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.pause", run = "id")
  public HttpResponse<?> pause(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    return act(request, id, form, "pause");
  }

  @Post("/{id}/resume")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.resume", run = "id")
  public HttpResponse<?> resume(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    return act(request, id, form, "resume");
  }

  @Post("/{id}/retry")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.retry", run = "id")
  public HttpResponse<?> retry(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    return act(request, id, form, "retry");
  }

  @Post("/{id}/delete")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.delete", run = "id")
  public HttpResponse<?> delete(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    return act(request, id, form, "delete");
  }

  private HttpResponse<?> act(
      HttpRequest<?> request, String id, @Nullable Map<String, String> form, String action) {
    UiSession session = forms.accept(request, form);
    long runId = runId(id, session);
    try {
      switch (action) {
        case "stop" -> runs.stop(runId);
        case "pause" -> runs.pause(runId);
        case "resume" -> runs.resume(runId);
        case "retry" -> runs.retry(runId);
        default -> {
          runs.delete(runId);
          return HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/runs?notice=deleted"));
        }
      }
    } catch (ProblemException e) {
      return refused(session, runId, e);
    }
    return HttpResponse.seeOther(
        URI.create(UiFilter.ROOT + "/runs/" + runId + "?notice=" + action));
  }

  @Post("/{id}/cap")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "run.cap", run = "id")
  public HttpResponse<?> cap(
      HttpRequest<?> request, @PathVariable String id, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    long runId = runId(id, session);
    String value = form == null ? null : form.get("maxParallelBatches");
    String body =
        FormJson.object(Collections.singletonMap("maxParallelBatches", FormJson.number(value)));
    HttpResponse<?> answer;
    try {
      runs.changeCap(runId, body);
      answer = HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/runs/" + runId + "?notice=cap"));
    } catch (ProblemException e) {
      answer = refused(session, runId, e);
    }
    return answer.setAttribute(Audited.DETAIL, body);
  }

  /**
   * The run's page showing why the API refused the control, with its status; recorded in the audit
   * trail as rejected with the API's detail.
   */
  private HttpResponse<?> refused(UiSession session, long runId, ProblemException e) {
    HttpStatus status = HttpStatus.valueOf(e.toProblem().status());
    if (status == HttpStatus.NOT_FOUND) {
      throw new UiRefusal(status, e.getMessage(), session);
    }
    String detail =
        e instanceof ValidationProblem validation
            ? String.join("; ", validation.errors().stream().map(FieldError::message).toList())
            : e.getMessage();
    return runPage(session, runId, null, status, "", detail)
        .setAttribute(Audited.PROBLEM, e.toProblem().detail());
  }

  private MutableHttpResponse<?> runPage(
      UiSession session,
      long runId,
      @Nullable Integer failedPage,
      HttpStatus status,
      String notice,
      String actionError) {
    RunResponse run;
    try {
      run = runs.get(runId);
    } catch (NotFoundProblem e) {
      throw new UiRefusal(HttpStatus.NOT_FOUND, e.getMessage(), session);
    }
    int number = failedPage == null || failedPage < 1 ? 1 : failedPage;
    PageResponse<BatchResponse> failed = runs.batches(runId, "failed", number - 1, FAILED_PER_PAGE);
    Map<String, Object> values = new HashMap<>();
    values.put("run", run);
    values.put("fmt", UiFormat.INSTANCE);
    values.put("failed", failed.items());
    values.put("pager", Pager.of(number, FAILED_PER_PAGE, failed.total(), "", "failedPage"));
    values.put("chart", ThroughputChart.svg(throughput.bars(run)));
    values.put("notice", notice);
    values.put("actionError", actionError);
    values.put(
        "temporalLink",
        pages.temporalWebUrl()
            + "/namespaces/"
            + URLEncoder.encode(temporal.namespace(), StandardCharsets.UTF_8)
            + "/workflows/"
            + URLEncoder.encode(run.workflowId(), StandardCharsets.UTF_8));
    values.put("controls", Controls.of(run));
    values.put("audit", audit.listOfRun(runId, Pageable.from(0, AUDIT_ENTRIES)).getContent());
    return UiPages.page(status, "run", pages.model("Run " + runId, "runs", session, values));
  }

  /** A run id from a path, as the API reads it; anything else names no run (a 404 page). */
  private static long runId(String id, UiSession session) {
    try {
      return RunDesk.runId(id);
    } catch (NotFoundProblem e) {
      throw new UiRefusal(HttpStatus.NOT_FOUND, e.getMessage(), session);
    }
  }

  private static String query(@Nullable String status, @Nullable String backfill) {
    StringBuilder query = new StringBuilder();
    if (status != null && !status.isBlank()) {
      query.append("&status=").append(URLEncoder.encode(status, StandardCharsets.UTF_8));
    }
    if (backfill != null && !backfill.isBlank()) {
      query.append("&backfill=").append(URLEncoder.encode(backfill, StandardCharsets.UTF_8));
    }
    return query.toString();
  }

  /**
   * Which controls a run's page offers: those whose request the run's status does not refuse
   * outright. The API's rules decide in the end, and a refusal is shown with its detail.
   */
  public record Controls(
      boolean stop, boolean pause, boolean resume, boolean retry, boolean cap, boolean delete) {
    static Controls of(RunResponse run) {
      String status = run.status();
      boolean live = status.equals("running") || status.equals("paused");
      boolean ended =
          status.equals("completed") || status.equals("failed") || status.equals("stopped");
      long failedOrStopped =
          run.batchCounts().getOrDefault("failed", 0L)
              + run.batchCounts().getOrDefault("stopped", 0L);
      return new Controls(
          live || status.equals("pending"),
          status.equals("running") || status.equals("pending"),
          status.equals("paused"),
          (status.equals("failed") || status.equals("stopped") || live) && failedOrStopped > 0,
          live || status.equals("pending"),
          ended || status.equals("pending"));
    }
  }
}
