package dev.dripline.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Dripline's HTTP API as the CLI calls it: JSON in, JSON out, {@code Authorization: Bearer <token>}
 * when a token is given. An answer of 400 or above, or no answer, becomes an {@link ApiFailure}
 * carrying the problem document's {@code detail} and each {@code errors[]} entry as {@code field:
 * message}, and the exit code its status maps to ({@link ExitCode#forStatus}).
 */
final class ApiClient {
  static final ObjectMapper JSON = new ObjectMapper();

  /** Dry runs wait for a worker to plan (up to the server's 30 s); a little more than that. */
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private static final int QUOTED_BODY_CHARS = 300;

  private final URI base;
  private final String token;
  private final HttpClient http;

  /**
   * @param base the API's base URL, e.g. {@code http://127.0.0.1:8080} (a path prefix is kept)
   * @param token the bearer token, or {@code null} or blank to send none
   */
  ApiClient(URI base, String token) {
    String text = base.toString();
    this.base = URI.create(text.endsWith("/") ? text : text + "/");
    this.token = token == null || token.isBlank() ? null : token;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  }

  ApiReply get(String path) {
    return send("GET", path, null);
  }

  ApiReply post(String path, JsonNode body) {
    return send("POST", path, body);
  }

  ApiReply put(String path, JsonNode body) {
    return send("PUT", path, body);
  }

  ApiReply patch(String path, JsonNode body) {
    return send("PATCH", path, body);
  }

  ApiReply delete(String path) {
    return send("DELETE", path, null);
  }

  /**
   * Sends a request and returns a successful answer.
   *
   * @param path the path below the base URL, with its query, e.g. {@code api/runs?page=0}
   * @param body the JSON body, or {@code null} for none
   * @throws ApiFailure for an answer of 400 or above, or when the server cannot be reached
   */
  ApiReply send(String method, String path, JsonNode body) {
    URI uri = base.resolve(path.startsWith("/") ? path.substring(1) : path);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT).header("Accept", "application/json");
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (body == null) {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      request
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
    }
    HttpResponse<String> response;
    try {
      response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (HttpTimeoutException e) {
      throw new ApiFailure(
          ExitCode.SERVER,
          "no answer from Dripline at " + base + " within " + REQUEST_TIMEOUT.toSeconds() + "s");
    } catch (IOException e) {
      throw new ApiFailure(
          ExitCode.SERVER, "cannot reach Dripline at " + base + " (DRIPLINE_URL): " + describe(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiFailure(ExitCode.SERVER, "interrupted");
    }
    String text = response.body() == null ? "" : response.body();
    if (response.statusCode() >= 400) {
      ApiFailure failure = failure(response.statusCode(), text);
      if (response.statusCode() == 401 && token == null) {
        List<String> lines = new ArrayList<>(failure.lines());
        lines.add("  no token was sent: set DRIPLINE_TOKEN or give --token");
        failure = new ApiFailure(failure.exitCode(), lines);
      }
      throw failure;
    }
    return new ApiReply(response.statusCode(), text, parse(text));
  }

  /** The failure an error answer means: its problem document's lines, or the raw body. */
  static ApiFailure failure(int status, String body) {
    List<String> lines = new ArrayList<>();
    JsonNode problem = parse(body);
    if (problem.hasNonNull("detail")) {
      String detail = problem.get("detail").asText();
      lines.add(detail);
      for (JsonNode error : problem.path("errors")) {
        String line = error.path("field").asText() + ": " + error.path("message").asText();
        if (!line.equals(detail)) {
          lines.add("  " + line);
        }
      }
      if (problem.hasNonNull("existingRunId")) {
        lines.add("  existing run: " + problem.get("existingRunId").asText());
      }
    } else {
      String quoted = body.strip();
      if (quoted.length() > QUOTED_BODY_CHARS) {
        quoted = quoted.substring(0, QUOTED_BODY_CHARS) + "…";
      }
      lines.add("HTTP " + status + (quoted.isEmpty() ? "" : ": " + quoted));
    }
    return new ApiFailure(ExitCode.forStatus(status), lines);
  }

  /** The body parsed as JSON; {@link MissingNode} when it is empty or not JSON. */
  static JsonNode parse(String body) {
    if (body == null || body.isBlank()) {
      return MissingNode.getInstance();
    }
    try {
      return JSON.readTree(body);
    } catch (JsonProcessingException e) {
      return MissingNode.getInstance();
    }
  }

  /** {@code path?name=value&...}, leaving out parameters whose value is {@code null}. */
  static String withQuery(String path, Map<String, Object> parameters) {
    StringJoiner query = new StringJoiner("&");
    parameters.forEach(
        (name, value) -> {
          if (value != null) {
            query.add(
                name + "=" + URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8));
          }
        });
    return query.length() == 0 ? path : path + "?" + query;
  }

  /** A path segment, percent-encoded (a target name, a check name). */
  static String segment(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** What went wrong with the connection, e.g. {@code ConnectException: Connection refused}. */
  private static String describe(IOException e) {
    String message = null;
    for (Throwable cause = e; cause != null && message == null; cause = cause.getCause()) {
      if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
        message = cause.getMessage();
      }
    }
    if (message == null && e instanceof ConnectException) {
      message = "connection refused";
    }
    String kind = e.getClass().getSimpleName();
    return message == null ? kind : kind + ": " + message;
  }
}
