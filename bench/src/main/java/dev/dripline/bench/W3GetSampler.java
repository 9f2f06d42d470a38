package dev.dripline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sends {@code GET /api/runs/{id}} at a fixed interval from its own thread, over one keep-alive
 * HTTP/1.1 connection, and keeps each response time in the progress decile the response itself
 * reports ({@code progress.processedKeys / total}). A request that is still running when the next
 * is due delays it (no catch-up burst). Errors (non-200, I/O, the 10 s timeout) are counted per
 * decile, their times not kept. {@link #paused} holds the requests back while the caller measures
 * something that would disturb them (the forced full GC of a heap sample).
 */
@SuppressWarnings("try") // close waits for the sampling thread and says so
final class W3GetSampler implements AutoCloseable {
  static final int DECILES = 10;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final URI uri;
  private final long total;
  private final long intervalNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<List<Double>> millis = new ArrayList<>();
  private final int[] errors = new int[DECILES];
  private final Thread thread;
  private volatile boolean running = true;
  private volatile long lastProcessed;
  private long pausedNanos;

  W3GetSampler(String url, long total, long intervalMillis) {
    this.uri = URI.create(url);
    this.total = total;
    this.intervalNanos = intervalMillis * 1_000_000L;
    for (int i = 0; i < DECILES; i++) {
      millis.add(new ArrayList<>());
    }
    this.thread = new Thread(this::loop, "w3-get-sampler");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  private void loop() {
    long next = System.nanoTime();
    while (running) {
      long now = System.nanoTime();
      if (now < next) {
        LockSupport.parkNanos(next - now);
        continue;
      }
      next = Math.max(next + intervalNanos, now);
      lock.lock();
      try {
        if (running) {
          sendOne();
        }
      } finally {
        lock.unlock();
      }
    }
  }

  private HttpRequest request() {
    return HttpRequest.newBuilder(uri)
        .timeout(Duration.ofSeconds(10))
        .header("Accept", "application/json")
        .header("Authorization", Services.AUTHORIZATION)
        .GET()
        .build();
  }

  /** Sends one request from the caller's thread and discards the answer (a warm-up). */
  void sendOnce() {
    try {
      http.send(request(), HttpResponse.BodyHandlers.discarding());
    } catch (IOException e) {
      // a warm-up only
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void sendOne() {
    long start = System.nanoTime();
    try {
      HttpResponse<String> response = http.send(request(), HttpResponse.BodyHandlers.ofString());
      double ms = (System.nanoTime() - start) / 1e6;
      if (response.statusCode() != 200) {
        error();
        return;
      }
      JsonNode processed = Services.JSON.readTree(response.body()).path("progress");
      long keys = processed.path("processedKeys").asLong(lastProcessed);
      lastProcessed = keys;
      synchronized (millis) {
        millis.get(decile(keys)).add(ms);
      }
    } catch (IOException e) {
      error();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  private void error() {
    synchronized (millis) {
      errors[decile(lastProcessed)]++;
    }
  }

  private int decile(long processed) {
    return (int) Math.max(0, Math.min(DECILES - 1, processed * DECILES / Math.max(1, total)));
  }

  /** Runs {@code action} with no request in flight and none sent meanwhile. */
  <T> T paused(Callable<T> action) throws Exception {
    long start = System.nanoTime();
    lock.lock();
    try {
      return action.call();
    } finally {
      pausedNanos += System.nanoTime() - start;
      lock.unlock();
    }
  }

  /** Seconds for which {@link #paused} held requests back. */
  double pausedSeconds() {
    return pausedNanos / 1e9;
  }

  /** Response times (ms) of the successful requests made in progress decile {@code d} (0..9). */
  List<Double> millis(int d) {
    synchronized (millis) {
      return List.copyOf(millis.get(d));
    }
  }

  /** Response times (ms) of every successful request. */
  List<Double> allMillis() {
    synchronized (millis) {
      List<Double> all = new ArrayList<>();
      millis.forEach(all::addAll);
      return all;
    }
  }

  int errors(int d) {
    synchronized (millis) {
      return errors[d];
    }
  }

  int allErrors() {
    synchronized (millis) {
      int sum = 0;
      for (int e : errors) {
        sum += e;
      }
      return sum;
    }
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join(15_000);
  }

  /** Nearest-rank percentile of {@code values} ({@code p} in 0..100); NaN when empty. */
  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
