package dev.dripline.app.webhooks;

import dev.dripline.app.problem.NotFoundProblem;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.app.request.QueryParameters;
import dev.dripline.app.run.PageRequest;
import dev.dripline.app.run.PageResponse;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.webhooks.WebhookDeliveryView;
import dev.dripline.store.webhooks.WebhookEvents;
import dev.dripline.store.webhooks.WebhookRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import jakarta.inject.Singleton;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the webhooks API does (spec O3): registers endpoints, lists and deletes them, pages their
 * deliveries. The secret is written once and answered once, by {@link #create}; no other answer
 * carries it, and nothing logs it.
 */
@Singleton
public class WebhookService {
  /** The Standard Webhooks bounds of a secret's key. */
  static final int MIN_KEY_BYTES = 24;

  static final int MAX_KEY_BYTES = 64;

  /** The key length of a generated secret. */
  static final int GENERATED_KEY_BYTES = 32;

  private static final String SECRET_PREFIX = "whsec_";

  /** How many unknown events an error names, so its message stays short. */
  private static final int MAX_NAMED_UNKNOWN = 3;

  private static final Set<String> DELIVERY_PARAMETERS = Set.of("page", "size");

  private final WebhookRepository webhooks;
  private final BodyReader bodies;
  private final WebhookUrls urls;
  private final SecureRandom random = new SecureRandom();

  public WebhookService(WebhookRepository webhooks, BodyReader bodies, WebhookUrls urls) {
    this.webhooks = webhooks;
    this.bodies = bodies;
    this.urls = urls;
  }

  /**
   * Registers an endpoint from the body {@code {url, events, secret?}}.
   *
   * @throws ValidationProblem naming every bad field; nothing is written then
   */
  public CreatedWebhookResponse create(String body, String createdBy) {
    BoundBody<CreateWebhookRequest> bound = bodies.read(body, CreateWebhookRequest.class);
    CreateWebhookRequest request = bound.body();
    List<FieldError> errors = new ArrayList<>(bound.errors());
    if (request.url() != null) {
      urls.problem(request.url()).ifPresent(problem -> errors.add(new FieldError("url", problem)));
    }
    if (request.events() != null) {
      eventsProblem(request.events()).ifPresent(errors::add);
    }
    if (request.secret() != null && !validSecret(request.secret())) {
      errors.add(new FieldError("secret", CreateWebhookRequest.SECRET_RULE));
    }
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    String secret = request.secret() != null ? request.secret() : generatedSecret();
    long id = webhooks.nextId();
    webhooks.insert(
        id,
        request.url(),
        new LinkedHashSet<>(request.events()).toArray(String[]::new),
        secret,
        createdBy);
    return CreatedWebhookResponse.of(get(id), secret);
  }

  private static Optional<FieldError> eventsProblem(Collection<String> events) {
    List<String> unknown =
        events.stream().filter(e -> !WebhookEvents.TYPES.contains(e)).distinct().toList();
    if (!unknown.isEmpty()) {
      String named =
          unknown.size() <= MAX_NAMED_UNKNOWN
              ? unknown.toString()
              : unknown.subList(0, MAX_NAMED_UNKNOWN)
                  + " and "
                  + (unknown.size() - MAX_NAMED_UNKNOWN)
                  + " more";
      return Optional.of(
          new FieldError(
              "events", "unknown event(s) " + named + "; known events: " + WebhookEvents.TYPES));
    }
    return Optional.empty();
  }

  private static boolean validSecret(String secret) {
    if (!secret.startsWith(SECRET_PREFIX)) {
      return false;
    }
    try {
      int length = Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length())).length;
      return length >= MIN_KEY_BYTES && length <= MAX_KEY_BYTES;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private String generatedSecret() {
    byte[] key = new byte[GENERATED_KEY_BYTES];
    random.nextBytes(key);
    return SECRET_PREFIX + Base64.getEncoder().encodeToString(key);
  }

  /** Every endpoint, oldest first. */
  public List<WebhookResponse> list() {
    return webhooks.list().stream().map(WebhookResponse::of).toList();
  }

  /** Endpoint {@code id}; 404 if none. */
  public WebhookResponse get(long id) {
    return webhooks.find(id).map(WebhookResponse::of).orElseThrow(() -> notFound(id));
  }

  /** Deletes endpoint {@code id} with its deliveries; 404 if none. */
  public void delete(long id) {
    if (webhooks.delete(id) == 0) {
      throw notFound(id);
    }
  }

  /** A page of endpoint {@code id}'s deliveries, newest first; 404 if no such endpoint. */
  public PageResponse<WebhookDeliveryResponse> deliveries(
      long id, Collection<String> parameters, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
    QueryParameters.unknown(parameters, DELIVERY_PARAMETERS, errors);
    PageRequest paging = QueryParameters.paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    get(id);
    Page<WebhookDeliveryView> rows =
        webhooks.deliveries(id, Pageable.from(paging.page(), paging.size()));
    return new PageResponse<>(
        rows.getContent().stream().map(WebhookDeliveryResponse::of).toList(),
        paging.page(),
        paging.size(),
        rows.getTotalSize());
  }

  static NotFoundProblem notFound(Object id) {
    String text = String.valueOf(id);
    return new NotFoundProblem(
        "no webhook with id " + (text.length() <= 100 ? text : text.substring(0, 100) + "…"));
  }
}
