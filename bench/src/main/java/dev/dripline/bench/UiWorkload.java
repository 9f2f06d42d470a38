package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.store.audit.AuditEventRepository;
import dev.dripline.store.pool.PoolRepository;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.ProgressSampleRepository;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.TargetRepository;
import io.micronaut.data.annotation.Query;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * UI — the dashboard and the read API over a large database (issue 32: "stays fast with 10,000 runs
 * and a run of 1,000,000 batches"). Seeds its database with SQL ({@link UiSeed}), starts an app JVM
 * alone ({@code AppApplication}, no worker), signs in to {@code /ui} through the sign-in form (its
 * CSRF cookie and field), then times each page and API endpoint: {@code --ui-requests} requests
 * each, interleaved round-robin after {@code --ui-warmup} rounds, median and p95. Then {@code
 * EXPLAIN (ANALYZE, BUFFERS)} of the repository statements those pages run, read from their
 * {@code @Query} annotations, with the same parameters, both as a custom plan (the values inlined)
 * and as a generic one (a prepared statement under {@code plan_cache_mode = force_generic_plan},
 * the plan a statement the app has run often may get): buffers touched, and any sequential scan of
 * {@code runs} or {@code batches} flagged. A function a statement calls ({@code
 * dripline_finished_batches}, {@code dripline_run_holds}) is planned apart and not shown.
 *
 * <p>Options: {@code --ui-runs} (10,000), {@code --ui-batches} (1,000,000, the big run's), {@code
 * --ui-run-batches} (10, every other run's), {@code --ui-targets} (300), {@code --ui-requests}
 * (30), {@code --ui-warmup} (5), {@code --ui-seed} (auto: only when the database does not hold this
 * seed already; always).
 */
final class UiWorkload {
  private static final Pattern PARAMETER = Pattern.compile("(?<![:\\w]):([A-Za-z][A-Za-z0-9]*)");

  private final BenchConfig config;
  private final Services services;
  private final HttpClient http =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .followRedirects(HttpClient.Redirect.NEVER)
          .build();
  private String sessionCookie;

  UiWorkload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  /** One page or endpoint timed. */
  private record Target(String name, String path, boolean ui) {}

  /** One statement explained: its label, SQL with {@code :name} parameters, and their values. */
  private record Explained(String page, String label, String sql, Map<String, Object> values) {}

  String run() throws Exception {
    int runs = config.intOption("ui-runs", 10_000);
    int bigBatches = config.intOption("ui-batches", 1_000_000);
    int runBatches = config.intOption("ui-run-batches", 10);
    int targets = config.intOption("ui-targets", 300);
    int requests = config.intOption("ui-requests", 30);
    int warmup = config.intOption("ui-warmup", 5);
    String seedMode = config.option("ui-seed", "auto");
    System.out.println();
    System.out.println(
        f(
            "== UI: %,d runs, one of %,d batches (the others %d each), %d targets; %d requests"
                + " per page after %d warm-up rounds",
            runs, bigBatches, runBatches, targets, requests, warmup));

    services.stopDripline();
    Map<String, String> env = new HashMap<>(services.driplineEnv());
    env.put("DRIPLINE_WORKER_ENABLED", "false");
    env.put("DRIPLINE_DB_POOL_SIZE", "10");
    long appStart = System.nanoTime();
    Process app =
        services.spawn(
            "ui-app",
            services.java(List.of(config.workerHeap()), "dev.dripline.app.AppApplication"),
            env);
    services.awaitHealthy(app, "UI app", services.baseUrl() + "/health", Duration.ofMinutes(5));
    System.out.println(f("app healthy after %.1f s", (System.nanoTime() - appStart) / 1e9));

    UiSeed seed = new UiSeed(config, runs, bigBatches, runBatches, targets);
    long big = seed.bigRunId();
    if (!seedMode.equals("always") && seed.present(services)) {
      System.out.println("seed: present already (--ui-seed always writes it again)");
    } else {
      System.out.println("seed:");
      System.out.println(f("seeded in %.1f s", seed.write()));
    }
    System.out.println(
        f(
            "database: runs %,d, batches %,d (%s), run_key_counts %,d, audit_events %,d",
            services.queryLong("select count(*) from runs"),
            services.queryLong("select count(*) from batches"),
            services.queryString("select pg_size_pretty(pg_total_relation_size('batches'))"),
            services.queryLong("select count(*) from run_key_counts"),
            services.queryLong("select count(*) from audit_events")));

    signIn();
    long failed =
        services.queryLong(
            "select count(*) from batches where run_id = ? and status = 'failed'", big);
    int lateRunsPage = Math.max(1, runs / 25 - 5);
    int lateFailedPage = (int) Math.max(1, failed / 10 - 5);
    int lateApiFailedPage = (int) Math.max(0, failed / 25 - 5);
    String delta = UiSeed.BACKFILLS[3];
    List<Target> pages =
        List.of(
            new Target("ui runs, page 1", "/ui/runs", true),
            new Target("ui runs, page " + lateRunsPage, "/ui/runs?page=" + lateRunsPage, true),
            new Target("ui runs, status=failed", "/ui/runs?status=failed", true),
            new Target("ui runs, backfill=" + delta, "/ui/runs?backfill=" + enc(delta), true),
            new Target("ui run (big), failed page 1", "/ui/runs/" + big, true),
            new Target(
                "ui run (big), failed page " + lateFailedPage,
                "/ui/runs/" + big + "?failedPage=" + lateFailedPage,
                true),
            new Target("ui targets", "/ui/targets", true),
            new Target("ui throttle and pools", "/ui/throttle", true),
            new Target("ui new run", "/ui/runs/new", true),
            new Target("api runs, page 0", "/api/runs?size=25", false),
            new Target(
                "api runs, page " + (lateRunsPage - 1),
                "/api/runs?size=25&page=" + (lateRunsPage - 1),
                false),
            new Target("api run (big)", "/api/runs/" + big, false),
            new Target(
                "api failed batches, page 0",
                "/api/runs/" + big + "/batches?status=failed&size=25",
                false),
            new Target(
                "api failed batches, page " + lateApiFailedPage,
                "/api/runs/" + big + "/batches?status=failed&size=25&page=" + lateApiFailedPage,
                false),
            new Target("api audit of the big run", "/api/audit?run=" + big, false));

    Map<Target, List<Double>> times = new LinkedHashMap<>();
    for (Target page : pages) {
      times.put(page, new ArrayList<>());
    }
    for (int round = 0; round < warmup + requests; round++) {
      for (Target page : pages) {
        double ms = get(page);
        if (round >= warmup) {
          times.get(page).add(ms);
        }
      }
    }
    System.out.println();
    System.out.println(
        "page                                                  median_ms   p95_ms   max_ms");
    double worstP95 = 0;
    for (Map.Entry<Target, List<Double>> e : times.entrySet()) {
      List<Double> t = e.getValue();
      double p95 = percentile(t, 0.95);
      worstP95 = Math.max(worstP95, p95);
      System.out.println(
          f(
              "%-52s %10.1f %8.1f %8.1f",
              e.getKey().name() + " (" + (e.getKey().ui() ? "html" : "json") + ")",
              BenchMain.median(t),
              p95,
              BenchMain.max(t)));
    }

    List<Long> firstPageIds = ids("select id from runs order by id desc limit 25");
    int scans =
        explainAll(explained(big, lateRunsPage, lateFailedPage, lateApiFailedPage, firstPageIds));
    double deleteMs = deleteBigRun(big);
    services.stop(app);
    return f(
        "worst p95 %.1f ms over %d pages/endpoints; %d plans with a Seq Scan on runs or batches;"
            + " DELETE of the big run %.1f ms",
        worstP95, pages.size(), scans, deleteMs);
  }

  // ------------------------------------------------------------------------------------------
  // HTTP

  /**
   * Deletes the big run (spec D5), stopped first by SQL (a running run cannot be deleted), and
   * times {@code DELETE /api/runs/{big}}: its batches are left to the purge, which this app alone
   * (no worker) does not run, so they are all still there when it has answered. The next invocation
   * seeds again.
   */
  private double deleteBigRun(long big) throws IOException, InterruptedException {
    services.queryLong(
        "with s as (update runs set status = 'stopped', finished_at = now() where id = ?"
            + " returning 1) select count(*) from s",
        big);
    long started = System.nanoTime();
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(services.baseUrl() + "/api/runs/" + big))
                .header("Authorization", Services.AUTHORIZATION)
                .timeout(Duration.ofMinutes(5))
                .DELETE()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    double ms = (System.nanoTime() - started) / 1e6;
    if (response.statusCode() != 204) {
      throw new IllegalStateException(
          "DELETE /api/runs/"
              + big
              + " answered "
              + response.statusCode()
              + ": "
              + response.body());
    }
    int afterwards =
        http.send(
                HttpRequest.newBuilder(URI.create(services.baseUrl() + "/api/runs/" + big))
                    .header("Authorization", Services.AUTHORIZATION)
                    .build(),
                HttpResponse.BodyHandlers.discarding())
            .statusCode();
    System.out.println();
    System.out.println(
        f(
            "DELETE /api/runs/%d: 204 in %.1f ms; GET then answers %d; batches left to the purge:"
                + " %,d",
            big,
            ms,
            afterwards,
            services.queryLong("select count(*) from batches where run_id = ?", big)));
    return ms;
  }

  /** Signs in through the form: its CSRF token is in both a cookie and a hidden field. */
  private void signIn() throws IOException, InterruptedException {
    HttpResponse<String> form =
        http.send(
            HttpRequest.newBuilder(URI.create(services.baseUrl() + "/ui/login")).build(),
            HttpResponse.BodyHandlers.ofString());
    String login = cookie(form, "dripline_login");
    Matcher field = Pattern.compile("name=\"_csrf\"\\s+value=\"([^\"]+)\"").matcher(form.body());
    String csrf = field.find() ? field.group(1) : login;
    String body =
        "_csrf="
            + enc(csrf)
            + "&token="
            + enc(Services.OPERATOR_TOKEN)
            + "&next="
            + enc("/ui/runs");
    HttpResponse<String> signedIn =
        http.send(
            HttpRequest.newBuilder(URI.create(services.baseUrl() + "/ui/login"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Cookie", "dripline_login=" + login)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    sessionCookie = cookie(signedIn, "dripline_session");
    if (signedIn.statusCode() != 303 || sessionCookie == null) {
      throw new IllegalStateException(
          "signing in answered " + signedIn.statusCode() + " without a session cookie");
    }
  }

  private static String cookie(HttpResponse<?> response, String name) {
    for (String header : response.headers().allValues("Set-Cookie")) {
      if (header.startsWith(name + "=")) {
        String value = header.substring(name.length() + 1);
        int end = value.indexOf(';');
        return end < 0 ? value : value.substring(0, end);
      }
    }
    return null;
  }

  /** One GET; its time in milliseconds. Anything but 200 fails the workload. */
  private double get(Target target) throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(services.baseUrl() + target.path()))
            .timeout(Duration.ofSeconds(60));
    if (target.ui()) {
      request.header("Cookie", "dripline_session=" + sessionCookie);
    } else {
      request.header("Authorization", Services.AUTHORIZATION);
    }
    long started = System.nanoTime();
    HttpResponse<byte[]> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    double ms = (System.nanoTime() - started) / 1e6;
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          target.path()
              + " answered "
              + response.statusCode()
              + ": "
              + new String(response.body(), StandardCharsets.UTF_8));
    }
    return ms;
  }

  private static String enc(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  static double percentile(List<Double> values, double p) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  // ------------------------------------------------------------------------------------------
  // EXPLAIN

  /** The repository statements of each page, with the parameters the page gives them. */
  private List<Explained> explained(
      long big, int lateRunsPage, int lateFailedPage, int lateApiFailedPage, List<Long> ids)
      throws NoSuchMethodException {
    List<Explained> all = new ArrayList<>();
    // The big run's chart as its page reads it: 40 edges of whole 10 s intervals from its start.
    long startMillis =
        services.queryLong(
            "select cast(extract(epoch from started_at) * 1000 as bigint) from runs where id = ?",
            big);
    long first = Math.floorDiv(startMillis, 10_000L) * 10_000L;
    long span = System.currentTimeMillis() - first;
    long chartStep = Math.max(1, (span + 399_999) / 400_000) * 10_000L;
    String chartStart = java.time.Instant.ofEpochMilli(first).toString();
    String runList = query(RunRepository.class, "list", false);

    all.add(new Explained("runs", "list p1", runList, runs(null, null, 0)));
    all.add(
        new Explained(
            "runs", "list count", query(RunRepository.class, "countAll", false), Map.of()));
    all.add(
        new Explained(
            "runs", "list p" + lateRunsPage, runList, runs(null, null, (lateRunsPage - 1) * 25L)));
    all.add(new Explained("runs", "status=failed p1", runList, runs("failed", null, 0)));
    all.add(
        new Explained(
            "runs",
            "status=failed count",
            query(RunRepository.class, "countOfStatus", false),
            values("status", "failed")));
    String delta = UiSeed.BACKFILLS[3];
    all.add(new Explained("runs", "backfill p1", runList, runs(null, delta, 0)));
    all.add(
        new Explained(
            "runs",
            "backfill count",
            query(RunRepository.class, "countOfBackfill", false),
            values("backfill", delta)));
    all.add(
        new Explained(
            "runs",
            "batch counts of a page",
            query(BatchRepository.class, "counts", false),
            values("runIds", ids)));
    all.add(
        new Explained("run", "find", query(RunRepository.class, "find", false), values("id", big)));
    all.add(
        new Explained(
            "run",
            "batch counts",
            query(BatchRepository.class, "counts", false),
            values("runIds", List.of(big))));
    String failedPage = query(BatchRepository.class, "pageOfStatus", false);
    all.add(new Explained("run", "failed p1", failedPage, failed(big, 10, 0)));
    all.add(
        new Explained(
            "run",
            "failed p" + lateFailedPage,
            failedPage,
            failed(big, 10, (lateFailedPage - 1) * 10L)));
    all.add(
        new Explained(
            "api",
            "failed page " + lateApiFailedPage,
            failedPage,
            failed(big, 25, lateApiFailedPage * 25L)));
    all.add(
        new Explained(
            "run",
            "chart (samples)",
            query(ProgressSampleRepository.class, "atEdges", false),
            values("runId", big, "first", chartStart, "stepMillis", chartStep, "edges", 40)));
    all.add(
        new Explained(
            "run",
            "chart (no samples)",
            query(BatchRepository.class, "recentCompletions", false),
            values("runId", big, "limit", 2000)));
    all.add(
        new Explained(
            "api",
            "audit of run",
            page(query(AuditEventRepository.class, "listOfRun", false), 20, 0),
            values("runId", big)));
    all.add(
        new Explained(
            "api",
            "audit count",
            query(AuditEventRepository.class, "listOfRun", true),
            values("runId", big)));
    all.add(
        new Explained(
            "targets",
            "failing first p1",
            page(query(TargetRepository.class, "listFailingFirst", false), 25, 0),
            values("failingStreak", 3)));
    all.add(
        new Explained(
            "throttle",
            "per backfill",
            query(RunRepository.class, "throttlePerBackfill", false),
            Map.of()));
    all.add(
        new Explained("throttle", "pools", query(PoolRepository.class, "list", false), Map.of()));
    return all;
  }

  private static Map<String, Object> runs(String status, String backfill, long offset) {
    return values("status", status, "backfill", backfill, "limit", 25, "offset", offset);
  }

  private static Map<String, Object> failed(long run, int limit, long offset) {
    return values("runId", run, "status", "failed", "limit", limit, "offset", offset);
  }

  private static Map<String, Object> values(Object... pairs) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      map.put((String) pairs[i], pairs[i + 1]);
    }
    return map;
  }

  private static String page(String sql, int limit, int offset) {
    return sql + " limit " + limit + " offset " + offset;
  }

  /** The {@code @Query} of {@code type}'s method {@code name} (its count query if asked). */
  private static String query(Class<?> type, String name, boolean count)
      throws NoSuchMethodException {
    for (Method method : type.getMethods()) {
      Query query = method.getAnnotation(Query.class);
      if (method.getName().equals(name) && query != null) {
        return count ? query.countQuery() : query.value();
      }
    }
    throw new NoSuchMethodException(type.getSimpleName() + "." + name + " with a @Query");
  }

  /** Explains each statement, custom and generic; returns how many plans scan runs or batches. */
  private int explainAll(List<Explained> statements) throws SQLException {
    System.out.println();
    System.out.println(
        "EXPLAIN (ANALYZE, BUFFERS): shared buffers hit+read, execution ms; custom plan | generic"
            + " plan; SEQ SCAN flags a sequential scan of runs or batches");
    System.out.println(
        "page      statement                    custom: buffers       ms | generic: buffers       ms");
    int scans = 0;
    try (Connection c =
            DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
        Statement s = c.createStatement()) {
      for (Explained e : statements) {
        Plan custom = explain(s, "explain (analyze, buffers, format json) " + inline(e));
        Plan generic = generic(s, e);
        scans += (custom.seqScans().isEmpty() ? 0 : 1) + (generic.seqScans().isEmpty() ? 0 : 1);
        System.out.println(
            f(
                "%-9s %-28s %15s %8.2f | %16s %8.2f%s%s",
                e.page(),
                e.label(),
                f("%,d", custom.buffers()),
                custom.ms(),
                f("%,d", generic.buffers()),
                generic.ms(),
                custom.seqScans().isEmpty() ? "" : "  SEQ SCAN (custom) " + custom.seqScans(),
                generic.seqScans().isEmpty() ? "" : "  SEQ SCAN (generic) " + generic.seqScans()));
      }
    }
    return scans;
  }

  private record Plan(long buffers, double ms, List<String> seqScans) {}

  /** The statement with its parameters as literals: the plan for these values. */
  private static String inline(Explained e) {
    Matcher m = PARAMETER.matcher(e.sql());
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(literal(e.values().get(m.group(1)))));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** A prepared statement under force_generic_plan, executed with the page's values. */
  private Plan generic(Statement s, Explained e) throws SQLException {
    Matcher m = PARAMETER.matcher(e.sql());
    StringBuilder out = new StringBuilder();
    List<String> names = new ArrayList<>();
    while (m.find()) {
      Object value = e.values().get(m.group(1));
      if (value instanceof List<?>) {
        m.appendReplacement(out, Matcher.quoteReplacement(literal(value)));
        continue;
      }
      int index = names.indexOf(m.group(1));
      if (index < 0) {
        names.add(m.group(1));
        index = names.size() - 1;
      }
      m.appendReplacement(out, Matcher.quoteReplacement("$" + (index + 1)));
    }
    m.appendTail(out);
    if (names.isEmpty()) {
      return explain(s, "explain (analyze, buffers, format json) " + out);
    }
    String types =
        names.stream()
            .map(n -> type(e.values().get(n)))
            .collect(Collectors.joining(", ", "(", ")"));
    String args =
        names.stream()
            .map(n -> literal(e.values().get(n)))
            .collect(Collectors.joining(", ", "(", ")"));
    s.execute("set plan_cache_mode = force_generic_plan");
    s.execute("prepare ui_bench_q " + types + " as " + out);
    try {
      return explain(s, "explain (analyze, buffers, format json) execute ui_bench_q " + args);
    } finally {
      s.execute("deallocate ui_bench_q");
      s.execute("reset plan_cache_mode");
    }
  }

  private static String type(Object value) {
    if (value instanceof Long) {
      return "bigint";
    }
    if (value instanceof Integer) {
      return "integer";
    }
    return "text";
  }

  private static String literal(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof List<?> list) {
      return list.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }
    if (value instanceof Number) {
      return value.toString();
    }
    return "'" + value.toString().replace("'", "''") + "'";
  }

  private static Plan explain(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      JsonNode root = Services.JSON.readTree(rs.getString(1)).get(0);
      JsonNode plan = root.get("Plan");
      long buffers =
          plan.path("Shared Hit Blocks").asLong() + plan.path("Shared Read Blocks").asLong();
      List<String> seq = new ArrayList<>();
      collectSeqScans(plan, seq);
      return new Plan(buffers, root.path("Execution Time").asDouble(), seq);
    } catch (IOException e) {
      throw new SQLException(e);
    }
  }

  private static void collectSeqScans(JsonNode node, List<String> out) {
    String relation = node.path("Relation Name").asText("");
    if (node.path("Node Type").asText("").equals("Seq Scan")
        && Arrays.asList("runs", "batches").contains(relation)) {
      out.add(relation + " (" + node.path("Actual Rows").asLong() + " rows)");
    }
    for (JsonNode child : node.path("Plans")) {
      collectSeqScans(child, out);
    }
  }

  private List<Long> ids(String sql) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Connection c =
            DriverManager.getConnection(config.dbUrl(), config.dbUser(), config.dbPassword());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    }
    return ids;
  }
}
