package dev.dripline.app.ui;

import io.micronaut.context.annotation.Requires;
import io.micronaut.core.io.ResourceResolver;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.swagger.v3.oas.annotations.Hidden;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/** The dashboard's stylesheet and script, open to all (they hold nothing secret). */
@Requires(notEnv = "worker")
@Hidden // the dashboard's pages are not the API: not in /openapi.yml
@Controller(UiFilter.ROOT + "/assets")
public class UiAssetsController {
  private static final Map<String, MediaType> ASSETS =
      Map.of(
          "dashboard.css", MediaType.of("text/css"),
          "dashboard.js", MediaType.of("text/javascript"));

  private final Map<String, byte[]> contents;

  public UiAssetsController(ResourceResolver resources) {
    this.contents =
        Map.of(
            "dashboard.css", read(resources, "dashboard.css"),
            "dashboard.js", read(resources, "dashboard.js"));
  }

  @Get("/{name}")
  public HttpResponse<byte[]> asset(@PathVariable String name) {
    byte[] content = contents.get(name);
    if (content == null) {
      return HttpResponse.notFound();
    }
    return HttpResponse.ok(content)
        .contentType(ASSETS.get(name))
        .header("Cache-Control", "no-cache");
  }

  private static byte[] read(ResourceResolver resources, String name) {
    try (InputStream in =
        resources
            .getResourceAsStream("classpath:ui-assets/" + name)
            .orElseThrow(() -> new IllegalStateException("missing ui-assets/" + name))) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
