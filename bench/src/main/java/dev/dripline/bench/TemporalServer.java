package dev.dripline.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Temporal server a workload runs Dripline against, by name:
 *
 * <ul>
 *   <li>{@code dev}: the dev server of {@code --temporal} ({@code temporal server start-dev}, which
 *       bin/dripline-bench starts);
 *   <li>{@code cluster}: the multi-service cluster (docs/cluster.md) the {@code --cluster-*}
 *       options describe, which bin/dripline-bench starts when {@code DRIPLINE_BENCH_CLUSTER=1}:
 *       {@code --cluster-temporal host:port} its frontend; {@code --cluster-db name} its
 *       persistence database in the bench's PostgreSQL (visibility: {@code name_visibility});
 *       {@code --cluster-metrics port} the first of its four services' Prometheus ports (history,
 *       matching, frontend, worker; 0: none); {@code --cluster-dir path} its configuration
 *       directory, which its processes' command lines name.
 * </ul>
 *
 * @param name dev or cluster
 * @param address the frontend's gRPC address
 * @param persistenceDb the cluster's persistence database, or empty (the dev server's is SQLite)
 * @param metricsPorts the services' Prometheus ports, empty when none
 * @param processMatch fragments of the server processes' command lines
 */
record TemporalServer(
    String name,
    String address,
    String persistenceDb,
    List<Integer> metricsPorts,
    List<String> processMatch) {

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** The servers {@code names} (comma-separated: dev, cluster) lists, in that order. */
  static List<TemporalServer> named(BenchConfig config, String names) {
    List<TemporalServer> servers = new ArrayList<>();
    for (String name : names.split(",")) {
      switch (name.trim()) {
        case "" -> {}
        case "dev" -> {
          String port =
              config.temporalAddress().substring(config.temporalAddress().lastIndexOf(':') + 1);
          servers.add(
              new TemporalServer(
                  "dev",
                  config.temporalAddress(),
                  "",
                  List.of(),
                  List.of("start-dev", "--port " + port + " ")));
        }
        case "cluster" -> {
          String address = config.option("cluster-temporal", "");
          String dir = config.option("cluster-dir", "");
          if (address.isEmpty() || dir.isEmpty()) {
            throw new IllegalArgumentException(
                "server 'cluster' needs --cluster-temporal and --cluster-dir"
                    + " (bin/dripline-bench sets them when DRIPLINE_BENCH_CLUSTER=1)");
          }
          int metrics = config.intOption("cluster-metrics", 0);
          List<Integer> ports =
              metrics > 0
                  ? List.of(metrics, metrics + 1, metrics + 2, metrics + 3)
                  : List.<Integer>of();
          servers.add(
              new TemporalServer(
                  "cluster",
                  address,
                  config.option("cluster-db", ""),
                  ports,
                  List.of("temporal-server", dir + "/config-")));
        }
        default ->
            throw new IllegalArgumentException(
                "unknown Temporal server '" + name.trim() + "' (dev or cluster)");
      }
    }
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("no Temporal server named in '" + names + "'");
    }
    return servers;
  }

  /** Pids of the server's processes (one for the dev server, four for the cluster). */
  List<Long> pids() {
    return CpuMeter.pidsWithCommandLine(processMatch.toArray(String[]::new));
  }

  /** Whether the server's Prometheus endpoints are known. */
  boolean hasMetrics() {
    return !metricsPorts.isEmpty();
  }

  /** The cluster's services in the order of their metrics ports. */
  static final List<String> SERVICES = List.of("history", "matching", "frontend", "worker");

  /**
   * The counter {@code metric} summed over the server's services, per value of its label {@code
   * label} (Prometheus text format); empty without metrics.
   */
  Map<String, Double> counter(String metric, String label) {
    return counter(metricsPorts, metric, label);
  }

  /** {@link #counter(String, String)} of one service (history, matching, frontend, worker). */
  Map<String, Double> counter(String service, String metric, String label) {
    int index = SERVICES.indexOf(service);
    return index < 0 || index >= metricsPorts.size()
        ? Map.of()
        : counter(List.of(metricsPorts.get(index)), metric, label);
  }

  private static Map<String, Double> counter(List<Integer> ports, String metric, String label) {
    Map<String, Double> sums = new TreeMap<>();
    for (int port : ports) {
      String text;
      try {
        text =
            HTTP.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .body();
      } catch (IOException e) {
        throw new IllegalStateException("cannot read the metrics on port " + port, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      for (String line : text.split("\n")) {
        if (!(line.startsWith(metric + "{") || line.startsWith(metric + " "))) {
          continue;
        }
        sums.merge(
            labelValue(line, label),
            Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)),
            Double::sum);
      }
    }
    return sums;
  }

  /** The value of {@code label} in a metric line's labels, or "" when it has none. */
  static String labelValue(String line, String label) {
    int open = line.indexOf('{');
    int close = line.indexOf('}');
    if (open < 0 || close < open) {
      return "";
    }
    String labels = "," + line.substring(open + 1, close);
    String key = "," + label + "=\"";
    int at = labels.indexOf(key);
    if (at < 0) {
      return "";
    }
    int start = at + key.length();
    return labels.substring(start, labels.indexOf('"', start));
  }
}
