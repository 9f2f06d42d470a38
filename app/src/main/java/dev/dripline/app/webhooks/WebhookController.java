package dev.dripline.app.webhooks;

import dev.dripline.app.run.PageResponse;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Delete;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.Status;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.security.authentication.Authentication;
import java.net.URI;
import java.util.List;

/**
 * The webhooks API (spec O3): {@code POST /api/webhooks} registers an endpoint (operator) and is
 * the one answer that carries its secret; {@code GET /api/webhooks}, {@code GET /api/webhooks/{id}}
 * and {@code GET /api/webhooks/{id}/deliveries} read (viewer and operator); {@code DELETE
 * /api/webhooks/{id}} deletes one with its deliveries (operator). Ids are taken as text: one that
 * is not a number names no webhook (404).
 */
@Requires(notEnv = "worker")
@Controller("/api/webhooks")
@ExecuteOn(TaskExecutors.BLOCKING)
public class WebhookController {
  private final WebhookService webhooks;

  public WebhookController(WebhookService webhooks) {
    this.webhooks = webhooks;
  }

  @Post
  @Consumes(MediaType.APPLICATION_JSON)
  public HttpResponse<CreatedWebhookResponse> create(
      @Body @Nullable String body, Authentication caller) {
    CreatedWebhookResponse created = webhooks.create(body, caller.getName());
    return HttpResponse.<CreatedWebhookResponse>status(HttpStatus.CREATED)
        .headers(h -> h.location(URI.create("/api/webhooks/" + created.id())))
        .body(created);
  }

  @Get
  public List<WebhookResponse> list() {
    return webhooks.list();
  }

  @Get("/{id}")
  public WebhookResponse get(@PathVariable String id) {
    return webhooks.get(webhookId(id));
  }

  @Delete("/{id}")
  @Status(HttpStatus.NO_CONTENT)
  public void delete(@PathVariable String id) {
    webhooks.delete(webhookId(id));
  }

  @Get("/{id}/deliveries")
  public PageResponse<WebhookDeliveryResponse> deliveries(
      HttpRequest<?> request,
      @PathVariable String id,
      @QueryValue @Nullable String page,
      @QueryValue @Nullable String size) {
    return webhooks.deliveries(webhookId(id), request.getParameters().names(), page, size);
  }

  private static long webhookId(String id) {
    try {
      long value = Long.parseLong(id);
      if (value > 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // names no webhook
    }
    throw WebhookService.notFound(id);
  }
}
