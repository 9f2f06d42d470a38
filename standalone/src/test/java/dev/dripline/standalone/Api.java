package dev.dripline.standalone;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * A small HTTP client for Dripline's API in tests: status, headers and parsed JSON body. It sends
 * {@code Authorization: Bearer <token>} (the development operator token unless told otherwise).
 */
final class Api {
  /** The local development stack's operator token (DRIPLINE_OPERATOR_TOKEN's default). */
  static final String OPERATOR_TOKEN = "dev-operator";

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final URI base;
  private final String token;

  Api(URI base) {
    this(base, OPERATOR_TOKEN);
  }

  /**
   * @param token the bearer token to send, or {@code null} to send none
   */
  Api(URI base, String token) {
    this.base = base;
    this.token = token;
  }

  record Response(int status, JsonNode body, HttpResponse<String> raw) {
    String header(String name) {
      return raw.headers().firstValue(name).orElse(null);
    }

    long id() {
      return body.get("id").asLong();
    }
  }

  /** The body of a GET as text, e.g. a Prometheus scrape. */
  String getText(String path) {
    try {
      return http.send(
              authorized(HttpRequest.newBuilder(base.resolve(path)))
                  .timeout(Duration.ofSeconds(30))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  Response get(String path) {
    return send(authorized(HttpRequest.newBuilder(base.resolve(path))).GET());
  }

  Response post(String path, Object body) {
    return post(path, body, Map.of());
  }

  Response post(String path, Object body, Map<String, String> headers) {
    HttpRequest.Builder request =
        authorized(HttpRequest.newBuilder(base.resolve(path)))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json(body)));
    headers.forEach(request::setHeader);
    return send(request);
  }

  Response put(String path, Object body) {
    return send(
        authorized(HttpRequest.newBuilder(base.resolve(path)))
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(json(body))));
  }

  Response patch(String path, Object body) {
    return send(
        authorized(HttpRequest.newBuilder(base.resolve(path)))
            .header("Content-Type", "application/json")
            .method("PATCH", HttpRequest.BodyPublishers.ofString(json(body))));
  }

  Response delete(String path) {
    return send(authorized(HttpRequest.newBuilder(base.resolve(path))).DELETE());
  }

  private static String json(Object body) {
    if (body instanceof String text) {
      return text;
    }
    try {
      return JSON.writeValueAsString(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The request with this client's bearer token, if it has one; a caller's own header wins. */
  private HttpRequest.Builder authorized(HttpRequest.Builder request) {
    return token == null ? request : request.setHeader("Authorization", "Bearer " + token);
  }

  private Response send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response =
          http.send(
              request.timeout(Duration.ofSeconds(30)).build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode body =
          response.body() == null || response.body().isBlank()
              ? JSON.nullNode()
              : JSON.readTree(response.body());
      return new Response(response.statusCode(), body, response);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
