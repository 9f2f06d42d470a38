package dev.dripline.app.ui;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A browser's part in the dashboard's tests: keeps the cookies it is given, follows no redirect,
 * and reads a page's form token.
 */
final class UiClient {
  private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]*)\"");

  private final HttpClient http =
      HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
  private final URI base;
  private final Map<String, String> cookies = new LinkedHashMap<>();

  UiClient(URI base) {
    this.base = base;
  }

  record Page(int status, String body, HttpResponse<String> response) {
    String location() {
      return response.headers().firstValue("Location").orElse("");
    }

    List<String> setCookies() {
      return response.headers().allValues("Set-Cookie");
    }

    String csrf() {
      Matcher matcher = CSRF.matcher(body);
      if (!matcher.find()) {
        throw new AssertionError("no form token on the page: " + body);
      }
      return matcher.group(1);
    }
  }

  Page get(String path) {
    return send(HttpRequest.newBuilder(base.resolve(path)).GET());
  }

  Page post(String path, Map<String, String> form) {
    String body =
        form.entrySet().stream()
            .map(
                e ->
                    URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                        + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    return send(
        HttpRequest.newBuilder(base.resolve(path))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  /** Signs in with {@code token} through the sign-in form; the answer to the form's POST. */
  Page signIn(String token) {
    Page login = get("/ui/login");
    return post("/ui/login", Map.of("_csrf", login.csrf(), "token", token, "next", "/ui/runs"));
  }

  void setCookie(String name, String value) {
    cookies.put(name, value);
  }

  String cookie(String name) {
    return cookies.get(name);
  }

  private Page send(HttpRequest.Builder request) {
    if (!cookies.isEmpty()) {
      request.header(
          "Cookie",
          cookies.entrySet().stream()
              .map(e -> e.getKey() + "=" + e.getValue())
              .collect(Collectors.joining("; ")));
    }
    try {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      for (String header : response.headers().allValues("Set-Cookie")) {
        String pair = header.split(";", 2)[0];
        int eq = pair.indexOf('=');
        String name = pair.substring(0, eq).trim();
        String value = pair.substring(eq + 1).trim();
        if (value.isEmpty() || header.toLowerCase(java.util.Locale.ROOT).contains("max-age=0")) {
          cookies.remove(name);
        } else {
          cookies.put(name, value);
        }
      }
      return new Page(response.statusCode(), response.body(), response);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
