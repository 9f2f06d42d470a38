package dev.dripline.standalone.faults;

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
 * A thread-safe client of Dripline's API for the fault-injection and load tests. Every request
 * carries {@code Authorization: Bearer dev-operator}; a transport failure (e.g. the app was killed)
 * is an {@link IOException} the caller sees, never a made-up status.
 */
final class OperatorApi {
  static final String OPERATOR_TOKEN = "dev-operator";
  static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final URI base;

  OperatorApi(URI base) {
    this.base = base;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** Status and parsed body (a JSON null when there is none, text when it is not JSON). */
  record Answer(int status, JsonNode body) {
    long id() {
      return body.path("id").asLong();
    }
  }

  static HttpRequest.Builder request(URI uri) {
    return HttpRequest.newBuilder(uri)
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + OPERATOR_TOKEN);
  }

  Answer get(String path) throws IOException, InterruptedException {
    return send(request(base.resolve(path)).GET());
  }

  Answer post(String path, Object body, Map<String, String> headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        request(base.resolve(path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json(body)));
    headers.forEach(request::header);
    return send(request);
  }

  Answer post(String path) throws IOException, InterruptedException {
    return post(path, "", Map.of());
  }

  Answer patch(String path, Object body) throws IOException, InterruptedException {
    return send(
        request(base.resolve(path))
            .header("Content-Type", "application/json")
            .method("PATCH", HttpRequest.BodyPublishers.ofString(json(body))));
  }

  Answer delete(String path) throws IOException, InterruptedException {
    return send(request(base.resolve(path)).DELETE());
  }

  /** The same as {@link #get} but failing the test on a transport error. */
  JsonNode getJson(String path) {
    try {
      Answer answer = get(path);
      if (answer.status() != 200) {
        throw new AssertionError("GET " + path + " answered " + answer);
      }
      return answer.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static String json(Object body) {
    if (body instanceof String text) {
      return text;
    }
    try {
      return JSON.writeValueAsString(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Answer send(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    String text = response.body();
    JsonNode body;
    if (text == null || text.isBlank()) {
      body = JSON.nullNode();
    } else {
      try {
        body = JSON.readTree(text);
      } catch (IOException e) {
        body = JSON.getNodeFactory().textNode(text);
      }
    }
    return new Answer(response.statusCode(), body);
  }
}
