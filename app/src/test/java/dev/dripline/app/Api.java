package dev.dripline.app;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpRequest;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * A small blocking client for the API that returns error responses instead of throwing. It sends
 * {@code Authorization: Bearer <token>} (the development operator token unless told otherwise) on
 * every request that does not carry its own.
 */
public final class Api {
  /** The local development stack's operator token (DRIPLINE_OPERATOR_TOKEN's default). */
  public static final String OPERATOR_TOKEN = "dev-operator";

  /** The local development stack's viewer token (DRIPLINE_VIEWER_TOKEN's default). */
  public static final String VIEWER_TOKEN = "dev-viewer";

  private final HttpClient client;
  private final JsonMapper json;
  private final String token;

  public Api(HttpClient client, JsonMapper json) {
    this(client, json, OPERATOR_TOKEN);
  }

  /**
   * @param token the bearer token to send, or {@code null} to send none
   */
  public Api(HttpClient client, JsonMapper json, @Nullable String token) {
    this.client = client;
    this.json = json;
    this.token = token;
  }

  /** A response: status, content type, {@code Location}, and the body as parsed JSON. */
  public record Reply(int status, String contentType, String location, Object body) {
    @SuppressWarnings("unchecked")
    public Map<String, Object> object() {
      return (Map<String, Object>) body;
    }

    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> list() {
      return (List<Map<String, Object>>) body;
    }

    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> items() {
      return (List<Map<String, Object>>) object().get("items");
    }

    /** The fields of a problem document's {@code errors}. */
    @SuppressWarnings("unchecked")
    public List<String> errorFields() {
      return ((List<Map<String, Object>>) object().get("errors"))
          .stream().map(error -> (String) error.get("field")).toList();
    }
  }

  public Reply get(String path) {
    return send(HttpRequest.GET(path));
  }

  public Reply post(String path, String body) {
    return send(HttpRequest.POST(path, body).contentType(MediaType.APPLICATION_JSON_TYPE));
  }

  public Reply post(String path, String body, String idempotencyKey) {
    return send(
        HttpRequest.POST(path, body)
            .contentType(MediaType.APPLICATION_JSON_TYPE)
            .header("Idempotency-Key", idempotencyKey));
  }

  public Reply put(String path, String body) {
    return send(HttpRequest.PUT(path, body).contentType(MediaType.APPLICATION_JSON_TYPE));
  }

  public Reply patch(String path, String body) {
    return send(HttpRequest.PATCH(path, body).contentType(MediaType.APPLICATION_JSON_TYPE));
  }

  public Reply delete(String path) {
    return send(HttpRequest.DELETE(path));
  }

  public Reply send(MutableHttpRequest<?> request) {
    if (token != null && !request.getHeaders().contains(HttpHeaders.AUTHORIZATION)) {
      request.bearerAuth(token);
    }
    HttpResponse<String> response;
    try {
      response = client.toBlocking().exchange(request, Argument.STRING, Argument.STRING);
    } catch (HttpClientResponseException e) {
      @SuppressWarnings("unchecked")
      HttpResponse<String> error = (HttpResponse<String>) e.getResponse();
      response = error;
    }
    String text = response.getBody(String.class).orElse(null);
    return new Reply(
        response.code(),
        response.getHeaders().get("Content-Type"),
        response.getHeaders().get("Location"),
        parse(text));
  }

  private Object parse(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return json.readValue(text, Object.class);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + text, e);
    }
  }
}
