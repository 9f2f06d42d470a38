package dev.dripline.app.webhooks;

import dev.dripline.app.audit.Audited;
import dev.dripline.app.openapi.ApiParameter;
import dev.dripline.app.openapi.OpenApi;
import dev.dripline.app.openapi.ProblemResponse;
import dev.dripline.app.problem.Problem;
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
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.parameters.RequestBody;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.responses.ApiResponses;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
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
@Tag(name = "webhooks")
@SecurityRequirement(name = OpenApi.BEARER)
@ProblemResponse.Unauthorized
@ExecuteOn(TaskExecutors.BLOCKING)
public class WebhookController {
  private final WebhookService webhooks;

  public WebhookController(WebhookService webhooks) {
    this.webhooks = webhooks;
  }

  @Post
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "createWebhook",
      summary = "Register a webhook endpoint; the one answer that carries its secret")
  @RequestBody(
      description = "the endpoint's URL, the events it subscribes to and, optionally, its secret",
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = CreateWebhookRequest.class)))
  @ApiResponses({
    @ApiResponse(
        responseCode = "201",
        description = "the endpoint with its secret; Location names it",
        content =
            @Content(
                mediaType = MediaType.APPLICATION_JSON,
                schema = @Schema(implementation = CreatedWebhookResponse.class))),
    @ApiResponse(
        responseCode = "400",
        description = "a field is invalid: one error each; nothing written",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.JsonBodyRefused
  @Audited("webhook.create")
  public HttpResponse<CreatedWebhookResponse> create(
      @Body @Parameter(hidden = true) @Nullable String body, Authentication caller) {
    CreatedWebhookResponse created = webhooks.create(body, caller.getName());
    return HttpResponse.<CreatedWebhookResponse>status(HttpStatus.CREATED)
        .headers(h -> h.location(URI.create("/api/webhooks/" + created.id())))
        .body(created);
  }

  @Get
  @Operation(operationId = "listWebhooks", summary = "Every webhook endpoint, oldest first")
  @ApiResponse(responseCode = "200", description = "the endpoints, without their secrets")
  public List<WebhookResponse> list() {
    return webhooks.list();
  }

  @Get("/{id}")
  @Operation(operationId = "getWebhook", summary = "A webhook endpoint, without its secret")
  @ApiResponse(
      responseCode = "200",
      description = "the endpoint",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = WebhookResponse.class)))
  @ProblemResponse.NoSuchWebhook
  public WebhookResponse get(@PathVariable @ApiParameter.WebhookId String id) {
    return webhooks.get(webhookId(id));
  }

  @Delete("/{id}")
  @Status(HttpStatus.NO_CONTENT)
  @Operation(
      operationId = "deleteWebhook",
      summary = "Delete a webhook endpoint and its deliveries")
  @ApiResponse(responseCode = "204", description = "deleted")
  @ProblemResponse.ViewerForbidden
  @ProblemResponse.NoSuchWebhook
  @Audited(value = "webhook.delete", subject = "id")
  public void delete(@PathVariable @ApiParameter.WebhookId String id) {
    webhooks.delete(webhookId(id));
  }

  @Get("/{id}/deliveries")
  @Operation(
      operationId = "listWebhookDeliveries",
      summary = "A page of a webhook endpoint's deliveries, newest first")
  @ApiResponse(responseCode = "200", description = "the page")
  @ProblemResponse.InvalidQuery
  @ProblemResponse.NoSuchWebhook
  public PageResponse<WebhookDeliveryResponse> deliveries(
      HttpRequest<?> request,
      @PathVariable @ApiParameter.WebhookId String id,
      @QueryValue @ApiParameter.Page @Nullable String page,
      @QueryValue @ApiParameter.PageSize @Nullable String size) {
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
