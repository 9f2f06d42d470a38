package dev.dripline.app.ui;

import dev.dripline.app.pool.PoolService;
import dev.dripline.app.run.PageResponse;
import dev.dripline.app.targets.TargetDesk;
import dev.dripline.app.targets.TargetResponse;
import dev.dripline.app.throttle.ThrottleService;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import java.util.HashMap;
import java.util.Map;

/**
 * The dashboard's targets (failing and stuck first) and its throttle and pools, as the targets,
 * throttle and pools APIs show them.
 */
@Requires(notEnv = "worker")
@Produces(MediaType.TEXT_HTML)
@Controller(UiFilter.ROOT)
@ExecuteOn(TaskExecutors.BLOCKING)
public class UiDeskController {
  /** Targets per page. */
  static final int TARGETS_PER_PAGE = 25;

  private final TargetDesk targets;
  private final ThrottleService throttle;
  private final PoolService pools;
  private final UiPages pages;

  public UiDeskController(
      TargetDesk targets, ThrottleService throttle, PoolService pools, UiPages pages) {
    this.targets = targets;
    this.throttle = throttle;
    this.pools = pools;
    this.pages = pages;
  }

  @Get("/targets")
  public HttpResponse<?> targets(
      @RequestAttribute(UiSession.ATTRIBUTE) UiSession session,
      @QueryValue @Nullable Integer page) {
    int number = page == null || page < 1 ? 1 : page;
    PageResponse<TargetResponse> found = targets.failingFirst(number - 1, TARGETS_PER_PAGE);
    Map<String, Object> values = new HashMap<>();
    values.put("targets", found.items());
    values.put("pager", Pager.of(number, TARGETS_PER_PAGE, found.total(), ""));
    values.put("fmt", UiFormat.INSTANCE);
    return UiPages.page(
        HttpStatus.OK, "targets", pages.model("Targets", "targets", session, values));
  }

  @Get("/throttle")
  public HttpResponse<?> throttle(@RequestAttribute(UiSession.ATTRIBUTE) UiSession session) {
    Map<String, Object> values = new HashMap<>();
    values.put("throttle", throttle.current());
    values.put("pools", pools.list());
    values.put("fmt", UiFormat.INSTANCE);
    return UiPages.page(
        HttpStatus.OK, "throttle", pages.model("Throttle and pools", "throttle", session, values));
  }
}
