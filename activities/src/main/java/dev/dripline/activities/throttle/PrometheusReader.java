package dev.dripline.activities.throttle;

import dev.dripline.runtime.throttle.ThrottleCheck;
import io.micronaut.json.tree.JsonNode;
import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Singleton;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads a {@code prometheus} health check: one instant query ({@code GET <url>/api/v1/query}) whose
 * result must be one number — a {@code scalar}, or a {@code vector} of exactly one sample. {@code
 * NaN} is unknown; {@code +Inf} is a number over any threshold. Anything else is an unknown reading
 * saying why: an HTTP error or {@code status: error} (with Prometheus's own error text), no answer
 * within the check's {@code timeout}, no connection, an empty vector (no series matched), several
 * series, a {@code matrix} or {@code string} result, or a body that is not Prometheus's JSON.
 */
@Singleton
public class PrometheusReader {
  private static final int MAX_BODY_SHOWN = 300;

  private final ObjectMapper objectMapper;

  /** Made at the first reading: a client runs a thread, which workers without such checks skip. */
  private HttpClient client;

  public PrometheusReader(ObjectMapper objectMapper) {
    this.objectMapper = objectMapper;
  }

  /** The check's reading now; never throws. */
  public CheckReading read(ThrottleCheck check) {
    try {
      return query(check);
    } catch (RuntimeException e) {
      return CheckReading.unknown("Prometheus at " + check.url() + ": " + describe(e));
    }
  }

  private CheckReading query(ThrottleCheck check) {
    Duration timeout = check.timeout();
    URI uri =
        URI.create(
            check.url()
                + "/api/v1/query?query="
                + URLEncoder.encode(check.query(), StandardCharsets.UTF_8));
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    CompletableFuture<HttpResponse<String>> sent =
        client().sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    HttpResponse<String> response;
    try {
      // The request's timeout ends at the response's headers; this bounds its body too.
      response = sent.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      sent.cancel(true);
      return noAnswer(check);
    } catch (InterruptedException e) {
      sent.cancel(true);
      Thread.currentThread().interrupt();
      return CheckReading.unknown("interrupted while reading Prometheus at " + check.url());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof HttpTimeoutException) {
        return noAnswer(check);
      }
      return CheckReading.unknown(
          "Prometheus at " + check.url() + " cannot be reached: " + describe(e.getCause()));
    }
    return reading(check, response.statusCode(), response.body());
  }

  private synchronized HttpClient client() {
    if (client == null) {
      client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();
    }
    return client;
  }

  private CheckReading reading(ThrottleCheck check, int status, String body) {
    JsonNode json;
    try {
      json = objectMapper.readValue(body, JsonNode.class);
    } catch (IOException | RuntimeException e) {
      json = null;
    }
    if (json == null || !json.isObject() || json.get("status") == null) {
      return CheckReading.unknown(
          "Prometheus at "
              + check.url()
              + " answered HTTP "
              + status
              + " with a body that is not its JSON: "
              + shorten(body));
    }
    if (!"success".equals(text(json.get("status"))) || status / 100 != 2) {
      String type = text(json.get("errorType"));
      String error = text(json.get("error"));
      return CheckReading.unknown(
          "Prometheus answered HTTP "
              + status
              + (type == null ? "" : " (" + type + ")")
              + ": "
              + (error == null ? shorten(body) : error));
    }
    JsonNode data = json.get("data");
    String resultType = data == null ? null : text(data.get("resultType"));
    JsonNode result = data == null ? null : data.get("result");
    if (resultType == null || result == null || !result.isArray()) {
      return CheckReading.unknown("Prometheus's answer has no data.result: " + shorten(body));
    }
    return switch (resultType) {
      case "scalar" -> sample(result);
      case "vector" -> {
        if (result.size() == 0) {
          yield CheckReading.unknown("the query matched no series (an empty vector)");
        }
        if (result.size() > 1) {
          yield CheckReading.unknown(
              "the query returned " + result.size() + " series, not one: aggregate it (sum, max)");
        }
        JsonNode value = result.get(0).get("value");
        yield value == null
            ? CheckReading.unknown("the vector's sample has no value: " + shorten(body))
            : sample(value);
      }
      default ->
          CheckReading.unknown(
              "the query returned a " + resultType + ", not a scalar or a one-series vector");
    };
  }

  /** A sample {@code [time, "value"]}: Prometheus writes its value as a string. */
  private static CheckReading sample(JsonNode sample) {
    JsonNode value = sample.isArray() && sample.size() == 2 ? sample.get(1) : null;
    String text = value == null ? null : text(value);
    if (text == null) {
      return CheckReading.unknown("a sample that is not [time, value]: " + sample);
    }
    double number;
    switch (text) {
      case "+Inf", "Inf" -> number = Double.POSITIVE_INFINITY;
      case "-Inf" -> number = Double.NEGATIVE_INFINITY;
      case "NaN" -> {
        return CheckReading.unknown("the query returned NaN");
      }
      default -> {
        try {
          number = Double.parseDouble(text);
        } catch (NumberFormatException e) {
          return CheckReading.unknown("the query returned '" + text + "', not a number");
        }
      }
    }
    return Double.isNaN(number)
        ? CheckReading.unknown("the query returned NaN")
        : CheckReading.of(number);
  }

  private static CheckReading noAnswer(ThrottleCheck check) {
    return CheckReading.unknown(
        "Prometheus at "
            + check.url()
            + " did not answer within "
            + check.timeout().toMillis()
            + " ms (timeout)");
  }

  private static String text(JsonNode node) {
    return node != null && node.isString() ? node.getStringValue() : null;
  }

  /**
   * What went wrong, from the first cause with a message; a refused connection has none (its chain
   * is {@code ConnectException}, {@code ClosedChannelException}), so then the chain's names.
   */
  private static String describe(Throwable e) {
    List<String> names = new ArrayList<>();
    for (Throwable t = e; t != null && names.size() < 5; t = t.getCause()) {
      if (t.getMessage() != null) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
      }
      names.add(t.getClass().getSimpleName());
    }
    String chain = String.join(" ← ", names);
    return e instanceof ConnectException ? chain + " (connection refused or unreachable)" : chain;
  }

  private static String shorten(String body) {
    String flat = body == null ? "" : body.strip().replaceAll("\\s+", " ");
    return flat.length() > MAX_BODY_SHOWN ? flat.substring(0, MAX_BODY_SHOWN) + "…" : flat;
  }
}
