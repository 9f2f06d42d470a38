package dev.dripline.app.ui;

import io.micronaut.context.annotation.Requires;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import jakarta.inject.Singleton;

/** Shows a {@link UiRefusal} as the dashboard's refusal page. */
@Produces(MediaType.TEXT_HTML)
@Singleton
@Requires(classes = {UiRefusal.class, ExceptionHandler.class})
public class UiRefusalHandler implements ExceptionHandler<UiRefusal, HttpResponse<String>> {
  private final UiPages pages;

  public UiRefusalHandler(UiPages pages) {
    this.pages = pages;
  }

  @Override
  @SuppressWarnings("rawtypes") // the interface declares a raw HttpRequest
  public HttpResponse<String> handle(HttpRequest request, UiRefusal refusal) {
    return pages.refusal(request, refusal.status(), refusal.getMessage(), refusal.session());
  }
}
