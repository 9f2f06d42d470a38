package dev.dripline.app.ui;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.pool.PoolService;
import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.run.PageResponse;
import dev.dripline.app.targets.ReplanPreview;
import dev.dripline.app.targets.TargetDesk;
import dev.dripline.app.targets.TargetResponse;
import dev.dripline.app.throttle.ThrottleService;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
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
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * The dashboard's targets (failing and stuck first) and its throttle and pools, as the targets,
 * throttle and pools APIs show them; the operator replans and deletes a target, puts the brake on
 * and off and sets a pool's size through the same services those APIs call, refused with their
 * words.
 */
@Requires(notEnv = "worker")
@Produces(MediaType.TEXT_HTML)
@Hidden // the dashboard's pages are not the API: not in /openapi.yml
@Controller(UiFilter.ROOT)
@ExecuteOn(TaskExecutors.BLOCKING)
public class UiDeskController {
  /** Targets per page. */
  static final int TARGETS_PER_PAGE = 25;

  private final TargetDesk targets;
  private final ThrottleService throttle;
  private final PoolService pools;

  /** What a control's redirect may say it did, by its key. */
  private static final Map<String, String> NOTICES =
      Map.of(
          "held", "The brake is on: no new batch of any run starts.",
          "released", "The brake is off.",
          "pool", "Pool size set.",
          "replanned", "Target replanned: back in pending_backfill with its failure streak reset.",
          "deleted", "Target deleted: its live batches removed, its run told to stop.");

  private final UiPages pages;
  private final UiForms forms;

  public UiDeskController(
      TargetDesk targets,
      ThrottleService throttle,
      PoolService pools,
      UiPages pages,
      UiForms forms) {
    this.targets = targets;
    this.throttle = throttle;
    this.pools = pools;
    this.pages = pages;
    this.forms = forms;
  }

  @Get("/targets")
  public HttpResponse<?> targets(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @QueryValue @Nullable Integer page,
      @QueryValue @Nullable String notice) {
    return targetsPage(
        session,
        HttpStatus.OK,
        page,
        NOTICES.getOrDefault(notice == null ? "" : notice, ""),
        "",
        null);
  }

  /**
   * Replans a target, as {@code POST /api/targets/{name}/replan} does; with {@code intent=preview}
   * first shows what it would do ({@code ?dryRun=true}), which changes nothing and is not recorded.
   */
  @Post("/targets/{name}/replan")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "target.replan", target = "name")
  public HttpResponse<?> replan(
      HttpRequest<?> request, @PathVariable String name, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    if (form != null && "preview".equals(form.get("intent"))) {
      HttpResponse<?> answer;
      try {
        ReplanPreview preview = targets.previewReplan(TargetDesk.targetName(name));
        answer = targetsPage(session, HttpStatus.OK, null, "", "", preview);
      } catch (ProblemException e) {
        answer = targetRefused(session, e);
      }
      return answer.setAttribute(Audited.PREVIEW, true);
    }
    return targetAct(session, () -> targets.replan(TargetDesk.targetName(name)), "replanned");
  }

  /** Deletes a target, as {@code DELETE /api/targets/{name}} does. */
  @Post("/targets/{name}/delete")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited(value = "target.delete", target = "name")
  public HttpResponse<?> deleteTarget(
      HttpRequest<?> request, @PathVariable String name, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    return targetAct(session, () -> targets.delete(TargetDesk.targetName(name)), "deleted");
  }

  private HttpResponse<?> targetAct(UiSession session, Runnable action, String notice) {
    try {
      action.run();
    } catch (ProblemException e) {
      return targetRefused(session, e);
    }
    return HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/targets?notice=" + notice));
  }

  /**
   * The targets page showing why the API refused the action, with its status; recorded in the audit
   * trail as rejected with the API's detail.
   */
  private HttpResponse<?> targetRefused(UiSession session, ProblemException e) {
    return targetsPage(
            session, HttpStatus.valueOf(e.toProblem().status()), null, "", e.getMessage(), null)
        .setAttribute(Audited.PROBLEM, e.toProblem().detail());
  }

  private MutableHttpResponse<?> targetsPage(
      UiSession session,
      HttpStatus status,
      @Nullable Integer page,
      String notice,
      String actionError,
      @Nullable ReplanPreview preview) {
    int number = page == null || page < 1 ? 1 : page;
    PageResponse<TargetResponse> found = targets.failingFirst(number - 1, TARGETS_PER_PAGE);
    Map<String, Object> values = new HashMap<>();
    values.put("targets", found.items());
    values.put("pager", Pager.of(number, TARGETS_PER_PAGE, found.total(), ""));
    values.put("fmt", UiFormat.INSTANCE);
    values.put("notice", notice);
    values.put("actionError", actionError);
    values.put("replan", preview);
    return UiPages.page(status, "targets", pages.model("Targets", "targets", session, values));
  }

  @Get("/throttle")
  public HttpResponse<?> throttle(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @QueryValue @Nullable String notice) {
    return throttlePage(
        session, HttpStatus.OK, NOTICES.getOrDefault(notice == null ? "" : notice, ""), "");
  }

  /** Puts the brake on, as {@code POST /api/throttle/hold} does, with the form's reason. */
  @Post("/throttle/hold")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited("throttle.hold")
  public HttpResponse<?> hold(HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    String reason = form == null ? null : form.get("reason");
    String body =
        FormJson.object(
            Collections.singletonMap("reason", reason == null || reason.isEmpty() ? null : reason));
    return act(session, () -> throttle.hold(body, session.name()), "held")
        .setAttribute(Audited.DETAIL, body);
  }

  /** Takes the brake off, as {@code POST /api/throttle/release} does. */
  @Post("/throttle/release")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited("throttle.release")
  public HttpResponse<?> release(HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    return act(session, throttle::release, "released");
  }

  /** Sets a pool's size, as {@code PUT /api/pools/{name}} does (creating the pool if need be). */
  @Post("/pools")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  @Audited("pool.put")
  public HttpResponse<?> poolSize(
      HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    UiSession session = forms.accept(request, form);
    String name = form == null || form.get("name") == null ? "" : form.get("name");
    String size = form == null ? null : form.get("size");
    String body = FormJson.object(Collections.singletonMap("size", FormJson.number(size)));
    return act(session, () -> pools.put(name, body), "pool")
        .setAttribute(Audited.SUBJECT, name)
        .setAttribute(Audited.DETAIL, body);
  }

  /**
   * Does {@code action}; a refusal is the throttle page with the API's status and detail, recorded
   * in the audit trail as rejected with the API's detail.
   */
  private HttpResponse<?> act(UiSession session, Runnable action, String notice) {
    try {
      action.run();
    } catch (ValidationProblem e) {
      return throttlePage(
              session,
              HttpStatus.BAD_REQUEST,
              "",
              String.join(
                  "; ",
                  e.errors().stream()
                      .map(error -> error.field() + ": " + error.message())
                      .toList()))
          .setAttribute(Audited.PROBLEM, e.toProblem().detail());
    } catch (ProblemException e) {
      return throttlePage(session, HttpStatus.valueOf(e.toProblem().status()), "", e.getMessage())
          .setAttribute(Audited.PROBLEM, e.toProblem().detail());
    }
    return HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/throttle?notice=" + notice));
  }

  private MutableHttpResponse<?> throttlePage(
      UiSession session, HttpStatus status, String notice, String actionError) {
    Map<String, Object> values = new HashMap<>();
    values.put("throttle", throttle.current());
    values.put("pools", pools.list());
    values.put("fmt", UiFormat.INSTANCE);
    values.put("notice", notice);
    values.put("actionError", actionError);
    return UiPages.page(
        status, "throttle", pages.model("Throttle and pools", "throttle", session, values));
  }
}
