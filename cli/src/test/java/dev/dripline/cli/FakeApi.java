package dev.dripline.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A stand-in for Dripline's API in unit tests: answers each {@code METHOD path} with the answers
 * queued for it, in order, the last one repeated; records every request. Binds 127.0.0.1 on a port
 * the kernel picks.
 */
final class FakeApi implements AutoCloseable {
  record Answer(int status, String contentType, String body) {}

  record Request(String method, String path, String authorization, String body) {}

  private final HttpServer server;
  private final Map<String, Deque<Answer>> answers = new ConcurrentHashMap<>();
  private final List<Request> requests = new ArrayList<>();

  FakeApi() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext("/", this::handle);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Answers {@code method path} (the path with its query) with JSON. */
  FakeApi on(String method, String path, int status, String body) {
    String type = status >= 400 ? "application/problem+json" : "application/json";
    answers
        .computeIfAbsent(method + " " + path, key -> new ArrayDeque<>())
        .add(new Answer(status, type, body));
    return this;
  }

  synchronized List<Request> requests() {
    return List.copyOf(requests);
  }

  private void handle(HttpExchange exchange) throws IOException {
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String path = exchange.getRequestURI().getRawPath();
    String query = exchange.getRequestURI().getRawQuery();
    String key = exchange.getRequestMethod() + " " + path + (query == null ? "" : "?" + query);
    synchronized (this) {
      requests.add(
          new Request(
              exchange.getRequestMethod(),
              key.substring(key.indexOf(' ') + 1),
              exchange.getRequestHeaders().getFirst("Authorization"),
              body));
    }
    Deque<Answer> queued = answers.get(key);
    Answer answer;
    if (queued == null || queued.isEmpty()) {
      answer =
          new Answer(
              404,
              "application/problem+json",
              "{\"status\":404,\"detail\":\"the fake API has no answer for " + key + "\"}");
    } else {
      answer = queued.size() > 1 ? queued.poll() : queued.peek();
    }
    byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", answer.contentType());
    if (bytes.length == 0) {
      exchange.sendResponseHeaders(answer.status(), -1);
    } else {
      exchange.sendResponseHeaders(answer.status(), bytes.length);
      exchange.getResponseBody().write(bytes);
    }
    exchange.close();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
