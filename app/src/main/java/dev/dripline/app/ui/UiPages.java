package dev.dripline.app.ui;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.views.ModelAndView;
import io.micronaut.views.thymeleaf.ThymeleafViewsRenderer;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

/** What every dashboard page's template is given, and the page that refuses a request. */
@Singleton
public class UiPages {
  private final UiConfig config;
  private final ThymeleafViewsRenderer<Map<String, Object>> renderer;

  public UiPages(UiConfig config, ThymeleafViewsRenderer<Map<String, Object>> renderer) {
    this.config = config;
    this.renderer = renderer;
  }

  /**
   * A page's model: its {@code title}, the {@code nav} entry it belongs to, the signed-in {@code
   * session} (with its form token, {@code csrf}) and the refresh period, plus {@code values}.
   */
  public Map<String, Object> model(
      String title, String nav, @Nullable UiSession session, Map<String, ?> values) {
    Map<String, Object> model = new HashMap<>(values);
    model.put("title", title);
    model.put("nav", nav);
    model.put("session", session);
    model.put("operator", session != null && session.operator());
    model.put("csrf", session == null ? "" : session.csrfToken());
    model.put("refreshSeconds", config.refreshSeconds());
    model.put("temporalWebUrl", config.temporalWebUrl());
    return model;
  }

  /** The Temporal Web UI's base URL. */
  public String temporalWebUrl() {
    return config.temporalWebUrl();
  }

  /** A page {@code view} with {@code model}, answered with {@code status}. */
  public static MutableHttpResponse<ModelAndView<Map<String, Object>>> page(
      HttpStatus status, String view, Map<String, Object> model) {
    return HttpResponse.<ModelAndView<Map<String, Object>>>status(status)
        .body(new ModelAndView<>(view, model));
  }

  /**
   * The page that refuses a request with {@code status}, saying {@code detail}; rendered here, as
   * it is answered from outside a route (the {@link UiFilter}, an exception handler).
   */
  public MutableHttpResponse<String> refusal(
      HttpRequest<?> request, HttpStatus status, String detail, @Nullable UiSession session) {
    Map<String, Object> model =
        model(
            status.getCode() + " " + status.getReason(),
            "",
            session,
            Map.of("status", status.getCode(), "detail", detail));
    StringWriter html = new StringWriter();
    try {
      renderer.render("refused", model, request).writeTo(html);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return HttpResponse.<String>status(status)
        .contentType(MediaType.TEXT_HTML_TYPE.toString() + ";charset=utf-8")
        .body(html.toString());
  }
}
