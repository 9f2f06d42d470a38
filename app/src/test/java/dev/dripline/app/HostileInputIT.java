package dev.dripline.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A hostile-input corpus for every endpoint of the API (spec §6.1, §8 "every bad request is a 4xx
 * with a clear problem document; none creates or changes anything"). Each case of {@link #corpus()}
 * is one request; for each the test asserts the expected 4xx, a problem document with a useful
 * {@code detail} that names the offending field or value and leaks no internals, and that every
 * Dripline table and sequence is exactly as it was before.
 *
 * <p>{@link #schemaBreakingBodies()} adds cases generated from the OpenAPI document's schemas of
 * the request bodies ({@link SchemaBreakingBodies}): each must be a 400 naming the property it
 * breaks, again changing nothing.
 *
 * <p>Temporal is pointed at a port nobody listens on: a request that slipped past validation and
 * tried to start or signal a workflow would be answered 503 and fail its case, so no case can start
 * a workflow unnoticed.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class HostileInputIT {
  private static final String SQL_INJECTION = "'; drop table runs; --";
  private static final String SQL_INJECTION_PATH = "1%27%3B%20drop%20table%20runs%3B%20--";
  private static final String NUL = "\\u0000";
  private static final int OVERSIZED = 2 * 1024 * 1024;

  @Inject EmbeddedServer server;
  @Inject JsonMapper json;
  @Inject Database database;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private TestData data;
  private final String backfill = TestData.uniqueName();
  private final String target = TestData.uniqueTarget();
  private long run;

  /**
   * One hostile request and what it must come to.
   *
   * @param name what the case tries
   * @param method the HTTP method
   * @param path path and query, percent-encoded; {@code {run}} and {@code {target}} name fixtures
   * @param headers headers besides {@code Authorization}; a {@code null} value omits the header
   * @param body the body, or {@code null} for none; {@code {backfill}} names the fixture definition
   * @param status the 4xx expected
   * @param mentions what the problem's {@code detail} must mention (case-insensitive)
   */
  record Case(
      String name,
      String method,
      String path,
      Map<String, String> headers,
      String body,
      int status,
      String mentions) {

    Case with(String header, String value) {
      Map<String, String> more = new LinkedHashMap<>(headers);
      more.put(header, value);
      return new Case(name, method, path, more, body, status, mentions);
    }

    @Override
    public String toString() {
      return method + " " + abbreviated(path) + ": " + name;
    }
  }

  static Stream<Case> corpus() {
    String longString = "x".repeat(100_000);
    String deep = "[".repeat(5_000) + "]".repeat(5_000);
    return Stream.of(
        // --- GET /api/backfills
        request("catalogue: POST", "POST", "/api/backfills", "{}", 405, "not allowed"),
        request("catalogue: DELETE", "DELETE", "/api/backfills", null, 405, "not allowed"),
        request("catalogue: PUT", "PUT", "/api/backfills", "{}", 405, "not allowed"),
        request("catalogue: unknown sub-resource", "GET", "/api/backfills/x", null, 404, "found"),

        // --- POST /api/runs: bodies that are not a JSON object
        createRun("malformed JSON", "{\"backfill\": ", 400, "body"),
        createRun("not JSON at all", "backfill=example.sleep", 400, "body"),
        createRun("JSON array", "[{\"backfill\":\"{backfill}\"}]", 400, "body"),
        createRun("JSON string", "\"{backfill}\"", 400, "body"),
        createRun("JSON null", "null", 400, "body"),
        createRun("JSON number", "42", 400, "body"),
        createRun("empty body", "", 400, "body"),
        createRun("trailing garbage", "{\"backfill\":\"{backfill}\"} {", 400, "more follows"),
        createRun("nested 5,000 deep", "{\"options\":" + deep + "}", 400, "body"),
        // --- POST /api/runs: fields
        createRun(
            "duplicate field",
            "{\"backfill\":\"nope\",\"backfill\":\"{backfill}\",\"options\":{\"items\":1}}",
            400,
            "duplicate field 'backfill'"),
        createRun(
            "duplicate option",
            run("{\"items\":1,\"items\":2}", ""),
            400,
            "duplicate field 'items'"),
        createRun("missing backfill", "{\"options\":{\"items\":1}}", 400, "backfill"),
        createRun("backfill an object", "{\"backfill\":{\"name\":\"x\"}}", 400, "backfill"),
        createRun("backfill blank", "{\"backfill\":\"  \"}", 400, "backfill"),
        createRun("backfill 100k chars", "{\"backfill\":\"" + longString + "\"}", 400, "backfill"),
        createRun(
            "backfill SQL injection", "{\"backfill\":\"" + SQL_INJECTION + "\"}", 400, "backfill"),
        createRun(
            "backfill JSON injection",
            "{\"backfill\":\"{backfill}\\\",\\\"options\\\":{}\"}",
            400,
            "backfill"),
        createRun("backfill with NUL", "{\"backfill\":\"a" + NUL + "b\"}", 400, "backfill"),
        createRun("options a string", run("\"items=1\"", ""), 400, "options"),
        createRun("options an array", run("[1]", ""), 400, "options"),
        createRun("unknown option", run("{\"items\":1,\"colour\":\"red\"}", ""), 400, "colour"),
        createRun(
            "option key SQL injection",
            run("{\"items\":1,\"" + SQL_INJECTION + "\":1}", ""),
            400,
            "drop table"),
        createRun("option string for integer", run("{\"items\":\"many\"}", ""), 400, "items"),
        createRun("option float for integer", run("{\"items\":1.5}", ""), 400, "items"),
        createRun("option 1e309", run("{\"items\":1e309}", ""), 400, "items: is out of range"),
        createRun("option Long overflow", run("{\"items\":9223372036854775808}", ""), 400, "items"),
        createRun("option negative", run("{\"items\":-1}", ""), 400, "items"),
        createRun(
            "option object for string", run("{\"items\":1,\"faultTag\":{}}", ""), 400, "faultTag"),
        createRun(
            "enum JSON injection",
            run("{\"items\":1,\"mode\":\"fast\\\",\\\"items\\\":9\"}", ""),
            400,
            "mode"),
        createRun(
            "option with NUL",
            run("{\"items\":1,\"faultTag\":\"a" + NUL + "b\"}", ""),
            400,
            "faultTag"),
        createRun(
            "option with a lone surrogate",
            run("{\"items\":1,\"faultTag\":\"a\\ud800b\"}", ""),
            400,
            "faultTag"),
        createRun("unknown field", run("{\"items\":1}", ",\"priority\":1"), 400, "priority"),
        createRun(
            "unknown field named by 10k chars",
            run("{\"items\":1}", ",\"" + "f".repeat(10_000) + "\":1"),
            400,
            "unknown field"),
        createRun(
            "option string of 10k chars",
            run("{\"items\":1,\"faultTag\":\"" + "t".repeat(10_000) + "\"}", ""),
            400,
            "bytes as JSON"),
        createRun(
            "status smuggled in", run("{\"items\":1}", ",\"status\":\"completed\""), 400, "status"),
        createRun(
            "batchSize negative", run("{\"items\":1}", ",\"batchSize\":-1"), 400, "batchSize"),
        createRun("batchSize zero", run("{\"items\":1}", ",\"batchSize\":0"), 400, "batchSize"),
        createRun(
            "batchSize string", run("{\"items\":1}", ",\"batchSize\":\"10\""), 400, "batchSize"),
        createRun("batchSize float", run("{\"items\":1}", ",\"batchSize\":2.5"), 400, "batchSize"),
        createRun(
            "batchSize above int",
            run("{\"items\":1}", ",\"batchSize\":2147483648"),
            400,
            "batchSize"),
        createRun(
            "batchSize 1e309", run("{\"items\":1}", ",\"batchSize\":1e309"), 400, "batchSize"),
        createRun(
            "maxRecords Long overflow",
            run("{\"items\":1}", ",\"maxRecords\":99999999999999999999"),
            400,
            "maxRecords"),
        createRun(
            "maxRecords negative", run("{\"items\":1}", ",\"maxRecords\":-5"), 400, "maxRecords"),
        createRun(
            "maxParallelBatches boolean",
            run("{\"items\":1}", ",\"maxParallelBatches\":true"),
            400,
            "maxParallelBatches"),
        createRun(
            "maxParallelBatches -1e309",
            run("{\"items\":1}", ",\"maxParallelBatches\":-1e309"),
            400,
            "maxParallelBatches"),
        createRun(
            "startAt not an instant",
            run("{\"items\":1}", ",\"startAt\":\"tomorrow\""),
            400,
            "startAt"),
        createRun(
            "startAt 30 February",
            run("{\"items\":1}", ",\"startAt\":\"2026-02-30T00:00:00Z\""),
            400,
            "startAt"),
        createRun(
            "startAt hour 25",
            run("{\"items\":1}", ",\"startAt\":\"2026-01-01T25:00:00Z\""),
            400,
            "startAt"),
        createRun(
            "startAt a date only",
            run("{\"items\":1}", ",\"startAt\":\"2026-01-01\""),
            400,
            "startAt"),
        createRun(
            "startAt epoch number",
            run("{\"items\":1}", ",\"startAt\":1767225600"),
            400,
            "startAt"),
        createRun(
            "startAt year 999999999",
            run("{\"items\":1}", ",\"startAt\":\"+999999999-12-31T23:59:59Z\""),
            400,
            "startAt"),
        createRun(
            "startAt year -999999999",
            run("{\"items\":1}", ",\"startAt\":\"-999999999-01-01T00:00:00Z\""),
            400,
            "startAt"),
        createRun(
            "startAt SQL injection",
            run("{\"items\":1}", ",\"startAt\":\"now()); drop table runs; --\""),
            400,
            "startAt"),
        // --- POST /api/runs: headers, size, methods
        createRun("text/plain", run("{\"items\":1}", ""), 415, "text/plain")
            .with("Content-Type", "text/plain"),
        createRun("XML", "<run><backfill>x</backfill></run>", 415, "application/xml")
            .with("Content-Type", "application/xml"),
        createRun(
            "oversized body",
            run("{\"items\":1,\"faultTag\":\"" + "x".repeat(OVERSIZED) + "\"}", ""),
            413,
            "content length"),
        createRun(
            "1 MB backfill name",
            "{\"backfill\":\"" + "x".repeat(1024 * 1024) + "\"}",
            413,
            "content length"),
        createRun("Idempotency-Key of 10k chars", run("{\"items\":1}", ""), 413, "too large")
            .with("Idempotency-Key", "k".repeat(10_000)),
        createRun("Idempotency-Key of 5k chars", run("{\"items\":1}", ""), 400, "Idempotency-Key")
            .with("Idempotency-Key", "k".repeat(5_000)),
        createRun("Idempotency-Key empty", run("{\"items\":1}", ""), 400, "Idempotency-Key")
            .with("Idempotency-Key", ""),
        request("runs: PUT", "PUT", "/api/runs", "{}", 405, "not allowed"),
        request("runs: DELETE all", "DELETE", "/api/runs", null, 405, "not allowed"),

        // --- GET /api/runs
        request("bad status", "GET", "/api/runs?status=finished", null, 400, "status"),
        request(
            "status SQL injection",
            "GET",
            "/api/runs?status=running%27%20or%201%3D1%20--",
            null,
            400,
            "status"),
        request("page negative", "GET", "/api/runs?page=-1", null, 400, "page"),
        request("page not a number", "GET", "/api/runs?page=x", null, 400, "page"),
        request("page above int", "GET", "/api/runs?page=9999999999999", null, 400, "page"),
        request("size zero", "GET", "/api/runs?size=0", null, 400, "size"),
        request("size huge", "GET", "/api/runs?size=1000000", null, 400, "size"),
        request("size float", "GET", "/api/runs?size=1.5", null, 400, "size"),
        request("limit=-1 (no such parameter)", "GET", "/api/runs?limit=-1", null, 400, "limit"),
        request("limit huge", "GET", "/api/runs?limit=99999999999999999999", null, 400, "limit"),
        request("bad cursor", "GET", "/api/runs?cursor=%27%3B--", null, 400, "cursor"),
        request(
            "backfill filter with NUL", "GET", "/api/runs?backfill=a%00b", null, 400, "backfill"),

        // --- GET /api/runs/{id}
        request("unknown id", "GET", "/api/runs/999999999999", null, 404, "999999999999"),
        request("non-numeric id", "GET", "/api/runs/abc", null, 404, "abc"),
        request("negative id", "GET", "/api/runs/-1", null, 404, "-1"),
        request("zero id", "GET", "/api/runs/0", null, 404, "no run"),
        request("id beyond Long", "GET", "/api/runs/99999999999999999999", null, 404, "no run"),
        request("fractional id", "GET", "/api/runs/1.5", null, 404, "1.5"),
        request(
            "SQL injection id", "GET", "/api/runs/" + SQL_INJECTION_PATH, null, 404, "drop table"),
        request("NUL id", "GET", "/api/runs/%00", null, 404, "no run"),
        request("POST on a run", "POST", "/api/runs/{run}", "{}", 405, "not allowed"),
        request("PUT on a run", "PUT", "/api/runs/{run}", "{}", 405, "not allowed"),

        // --- GET /api/runs/{id}/batches
        request(
            "bad batch status", "GET", "/api/runs/{run}/batches?status=done", null, 400, "status"),
        request("batch size negative", "GET", "/api/runs/{run}/batches?size=-1", null, 400, "size"),
        request("batch cursor", "GET", "/api/runs/{run}/batches?cursor=1", null, 400, "cursor"),
        request(
            "batches of unknown run", "GET", "/api/runs/999999999999/batches", null, 404, "no run"),
        request("batches of non-numeric id", "GET", "/api/runs/x/batches", null, 404, "no run"),
        request("POST batches", "POST", "/api/runs/{run}/batches", "{}", 405, "not allowed"),

        // --- POST /api/runs/{id}/stop, retry, pause, resume
        request("stop unknown run", "POST", "/api/runs/999999999999/stop", null, 404, "no run"),
        request(
            "stop SQL injection id",
            "POST",
            "/api/runs/" + SQL_INJECTION_PATH + "/stop",
            null,
            404,
            "drop table"),
        request("retry non-numeric id", "POST", "/api/runs/x/retry", null, 404, "no run"),
        request("pause negative id", "POST", "/api/runs/-5/pause", null, 404, "no run"),
        request("resume unknown run", "POST", "/api/runs/999999999999/resume", null, 404, "no run"),
        request("GET stop", "GET", "/api/runs/{run}/stop", null, 405, "not allowed"),
        request("DELETE retry", "DELETE", "/api/runs/{run}/retry", null, 405, "not allowed"),
        request("PUT pause", "PUT", "/api/runs/{run}/pause", "{}", 405, "not allowed"),
        request("GET resume", "GET", "/api/runs/{run}/resume", null, 405, "not allowed"),
        request(
            "pause a run that has ended",
            "POST",
            "/api/runs/{ended}/pause",
            null,
            409,
            "only a pending or running run"),
        request(
            "resume a run that is not paused",
            "POST",
            "/api/runs/{run}/resume",
            null,
            409,
            "only a paused run"),

        // --- PATCH /api/runs/{id}
        patchRun("empty object", "{}", 400, "maxParallelBatches"),
        patchRun("malformed JSON", "{\"maxParallelBatches\":", 400, "body"),
        patchRun("JSON array", "[5]", 400, "body"),
        patchRun("negative cap", "{\"maxParallelBatches\":-1}", 400, "maxParallelBatches"),
        patchRun("cap 1e309", "{\"maxParallelBatches\":1e309}", 400, "maxParallelBatches"),
        patchRun("cap a string", "{\"maxParallelBatches\":\"5\"}", 400, "maxParallelBatches"),
        patchRun("cap above int", "{\"maxParallelBatches\":2147483648}", 400, "maxParallelBatches"),
        patchRun(
            "status smuggled in",
            "{\"maxParallelBatches\":5,\"status\":\"completed\"}",
            400,
            "status"),
        patchRun("text/plain", "{\"maxParallelBatches\":5}", 415, "text/plain")
            .with("Content-Type", "text/plain"),
        request(
            "cap of unknown run",
            "PATCH",
            "/api/runs/999999999999",
            "{\"maxParallelBatches\":5}",
            404,
            "no run"),
        request(
            "cap of SQL injection id",
            "PATCH",
            "/api/runs/" + SQL_INJECTION_PATH,
            "{\"maxParallelBatches\":5}",
            404,
            "drop table"),

        // --- DELETE /api/runs/{id}
        request("delete unknown run", "DELETE", "/api/runs/999999999999", null, 404, "no run"),
        request("delete non-numeric id", "DELETE", "/api/runs/abc", null, 404, "abc"),
        request("delete a running run", "DELETE", "/api/runs/{run}", null, 409, "running"),

        // --- POST /api/targets
        createTarget("malformed JSON", "{\"name\":", 400, "body"),
        createTarget("JSON array", "[]", 400, "body"),
        createTarget("JSON null", "null", 400, "body"),
        createTarget(
            "duplicate name",
            "{\"name\":\"{target}\",\"name\":\"{target}-new\",\"backfill\":\"{backfill}\"}",
            400,
            "duplicate field 'name'"),
        createTarget(
            "missing name", "{\"backfill\":\"{backfill}\",\"options\":{\"items\":1}}", 400, "name"),
        createTarget("name a number", target("7", ""), 400, "name"),
        createTarget("name 100k chars", target("\"" + longString + "\"", ""), 400, "name"),
        createTarget("name SQL injection", target("\"x" + SQL_INJECTION + "\"", ""), 400, "name"),
        createTarget(
            "name JSON injection", target("\"a\\\",\\\"state\\\":\\\"primed\"", ""), 400, "name"),
        createTarget("name with NUL", target("\"a" + NUL + "b\"", ""), 400, "name"),
        createTarget("name with a path", target("\"../runs/1\"", ""), 400, "name"),
        createTarget("group an object", target("\"{target}-new\"", ",\"group\":{}"), 400, "group"),
        createTarget(
            "backfill SQL injection",
            "{\"name\":\"{target}-new\",\"backfill\":\"" + SQL_INJECTION + "\"}",
            400,
            "backfill"),
        createTarget(
            "state smuggled in", target("\"{target}-new\"", ",\"state\":\"primed\""), 400, "state"),
        createTarget(
            "streak smuggled in",
            target("\"{target}-new\"", ",\"consecutiveFailures\":-1"),
            400,
            "consecutiveFailures"),
        createTarget(
            "option 1e309",
            "{\"name\":\"{target}-new\",\"backfill\":\"{backfill}\",\"options\":{\"items\":1e309}}",
            400,
            "items: is out of range"),
        createTarget(
            "option with NUL",
            "{\"name\":\"{target}-new\",\"backfill\":\"{backfill}\","
                + "\"options\":{\"items\":1,\"faultTag\":\"a"
                + NUL
                + "\"}}",
            400,
            "faultTag"),
        createTarget("text/plain", target("\"{target}-new\"", ""), 415, "text/plain")
            .with("Content-Type", "text/plain"),
        createTarget(
            "oversized body",
            target("\"{target}-new\"", ",\"group\":\"" + "g".repeat(OVERSIZED) + "\""),
            413,
            "content length"),
        createTarget(
            "option string of 10k chars",
            "{\"name\":\"{target}-new\",\"backfill\":\"{backfill}\","
                + "\"options\":{\"items\":1,\"faultTag\":\""
                + "t".repeat(10_000)
                + "\"}}",
            400,
            "bytes as JSON"),
        createTarget("existing name", target("\"{target}\"", ""), 409, "exists"),
        request("targets: PUT", "PUT", "/api/targets", "{}", 405, "not allowed"),

        // --- GET /api/targets
        request("bad state", "GET", "/api/targets?state=dormant", null, 400, "state"),
        request("page negative", "GET", "/api/targets?page=-1", null, 400, "page"),
        request("size huge", "GET", "/api/targets?size=99999999999", null, 400, "size"),
        request("limit=-1 (no such parameter)", "GET", "/api/targets?limit=-1", null, 400, "limit"),
        request("group filter with NUL", "GET", "/api/targets?group=a%00b", null, 400, "group"),

        // --- GET, DELETE /api/targets/{name}
        request(
            "unknown target", "GET", "/api/targets/no-such-target", null, 404, "no-such-target"),
        request(
            "SQL injection name",
            "GET",
            "/api/targets/" + SQL_INJECTION_PATH,
            null,
            404,
            "drop table"),
        request("NUL name", "GET", "/api/targets/a%00b", null, 404, "no target"),
        request(
            "name of 3k chars", "GET", "/api/targets/" + "n".repeat(3_000), null, 404, "no target"),
        request(
            "delete unknown target",
            "DELETE",
            "/api/targets/no-such-target",
            null,
            404,
            "no-such-target"),
        request("delete NUL name", "DELETE", "/api/targets/a%00b", null, 404, "no target"),
        request("PUT a target", "PUT", "/api/targets/{target}", "{}", 405, "not allowed"),
        request("PATCH a target", "PATCH", "/api/targets/{target}", "{}", 405, "not allowed"),

        // --- POST /api/targets/{name}/live-batches
        liveBatch("malformed JSON", "{\"payload\":", 400, "body"),
        liveBatch("JSON string", "\"payload\"", 400, "body"),
        liveBatch(
            "duplicate payload",
            "{\"payload\":{\"a\":1},\"payload\":{\"b\":2}}",
            400,
            "duplicate field 'payload'"),
        liveBatch("missing payload", "{}", 400, "payload"),
        liveBatch("payload an array", "{\"payload\":[1]}", 400, "payload"),
        liveBatch(
            "payload with NUL",
            "{\"payload\":{\"events\":[{\"body\":\"" + NUL + "\"}]}}",
            400,
            "payload"),
        liveBatch("payload nested 5,000 deep", "{\"payload\":{\"a\":" + deep + "}}", 400, "body"),
        liveBatch("unknown field", "{\"payload\":{},\"seq\":1}", 400, "seq"),
        liveBatch("text/plain", "{\"payload\":{}}", 415, "text/plain")
            .with("Content-Type", "text/plain"),
        liveBatch(
            "oversized",
            "{\"payload\":{\"b\":\"" + "x".repeat(OVERSIZED) + "\"}}",
            413,
            "content length"),
        request(
            "live batch of unknown target",
            "POST",
            "/api/targets/no-such-target/live-batches",
            "{\"payload\":{}}",
            404,
            "no-such-target"),
        request(
            "live batch of NUL name",
            "POST",
            "/api/targets/a%00b/live-batches",
            "{\"payload\":{}}",
            404,
            "no target"),
        request(
            "GET live batches",
            "GET",
            "/api/targets/{target}/live-batches",
            null,
            405,
            "not allowed"),

        // --- POST /api/targets/{name}/replan
        request(
            "dryRun=maybe",
            "POST",
            "/api/targets/{target}/replan?dryRun=maybe",
            null,
            400,
            "dryRun"),
        request(
            "replan unknown query parameter",
            "POST",
            "/api/targets/{target}/replan?force=true",
            null,
            400,
            "force"),
        request(
            "replan unknown target",
            "POST",
            "/api/targets/no-such-target/replan",
            null,
            404,
            "no-such-target"),
        request(
            "dry replan unknown target",
            "POST",
            "/api/targets/no-such-target/replan?dryRun=true",
            null,
            404,
            "no-such-target"),
        request("replan NUL name", "POST", "/api/targets/a%00b/replan", null, 404, "no target"),
        request("GET replan", "GET", "/api/targets/{target}/replan", null, 405, "not allowed"),

        // --- webhooks
        request(
            "webhook: no url",
            "POST",
            "/api/webhooks",
            "{\"events\":[\"run.failed\"]}",
            400,
            "url"),
        request(
            "webhook: javascript url",
            "POST",
            "/api/webhooks",
            "{\"url\":\"javascript:alert(1)\",\"events\":[\"run.failed\"]}",
            400,
            "url"),
        request(
            "webhook: unknown event",
            "POST",
            "/api/webhooks",
            "{\"url\":\"http://127.0.0.1:18132/x\",\"events\":[\"run.*\"]}",
            400,
            "events"),
        request(
            "webhook: events not strings",
            "POST",
            "/api/webhooks",
            "{\"url\":\"http://127.0.0.1:18132/x\",\"events\":[{}]}",
            400,
            "events"),
        request(
            "webhook: secret not whsec",
            "POST",
            "/api/webhooks",
            "{\"url\":\"http://127.0.0.1:18132/x\",\"events\":[\"run.failed\"],"
                + "\"secret\":\"whsec_!!\"}",
            400,
            "secret"),
        request("webhook: non-numeric id", "GET", "/api/webhooks/abc", null, 404, "no webhook"),
        request(
            "webhook: deliveries size huge",
            "GET",
            "/api/webhooks/1/deliveries?size=100000",
            null,
            400,
            "size"),
        request("webhook: PUT", "PUT", "/api/webhooks/1", "{}", 405, "not allowed"),
        // --- elsewhere
        request("POST health", "POST", "/health", "{}", 405, "not allowed"),
        request("unknown API path", "GET", "/api/nothing", null, 404, "found"),
        request(
            "path of 10k chars", "GET", "/api/runs/" + "9".repeat(10_000), null, 413, "too large"));
  }

  /** Bodies that break the OpenAPI document's schemas, one property and one rule each. */
  static Stream<SchemaBreakingBodies.Case> schemaBreakingBodies() {
    return SchemaBreakingBodies.of(OpenApiDocument.fromClasspath()).stream();
  }

  @BeforeEach
  void setUp() {
    data = new TestData(database);
    data.definition(backfill, 10, null);
    // Options no case uses, so a body that passes validation reaches the insert, not a duplicate.
    run = data.run(backfill, "running", "{\"items\":3,\"mode\":\"fast\",\"sleepMs\":0}");
    data.target(target, backfill, "pending_backfill", 0);
  }

  @AfterEach
  void tearDown() {
    data.cleanUpTargets(target);
    data.cleanUp(backfill);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corpus")
  void isRejectedWithAProblemAndChangesNothing(Case hostile) throws Exception {
    long ended = data.run(backfill, "completed", "{\"items\":2,\"mode\":\"fast\",\"sleepMs\":0}");
    Map<String, String> before = snapshot();

    HttpResponse<String> response = send(hostile, ended);

    assertThat(response.statusCode())
        .as("status; body: %s", abbreviated(response.body()))
        .isEqualTo(hostile.status());
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    Map<String, Object> problem =
        json.readValue(response.body(), Argument.mapOf(String.class, Object.class));
    assertThat(problem).containsEntry("status", hostile.status());
    assertThat(problem.get("type")).asString().isNotBlank();
    assertThat(problem.get("title")).asString().isNotBlank();
    String detail = (String) problem.get("detail");
    assertThat(detail).isNotBlank().hasSizeLessThanOrEqualTo(1_000);
    assertThat(detail.toLowerCase(Locale.ROOT))
        .contains(hostile.mentions().toLowerCase(Locale.ROOT))
        .doesNotContain("exception", "org.postgresql", "java.", "\tat ", "sqlstate", "error:");
    assertThat(snapshot()).as("every table and sequence").isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemaBreakingBodies")
  void aBodyBreakingItsSchemaIsA400NamingThePropertyAndChangesNothing(
      SchemaBreakingBodies.Case hostile) throws Exception {
    long ended = data.run(backfill, "completed", "{\"items\":2,\"mode\":\"fast\",\"sleepMs\":0}");
    Map<String, String> before = snapshot();

    HttpResponse<String> response =
        send(
            new Case(
                hostile.toString(),
                hostile.method(),
                hostile.path(),
                Map.of(),
                hostile.body(),
                400,
                hostile.field()),
            ended);

    assertThat(response.statusCode())
        .as("status; body: %s", abbreviated(response.body()))
        .isEqualTo(400);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    Map<String, Object> problem =
        json.readValue(response.body(), Argument.mapOf(String.class, Object.class));
    assertThat(problem).containsEntry("status", 400);
    List<?> errors = (List<?>) problem.getOrDefault("errors", List.of());
    List<String> fields =
        errors.stream().map(error -> String.valueOf(((Map<?, ?>) error).get("field"))).toList();
    assertThat(fields).as("errors of %s", abbreviated(response.body())).contains(hostile.field());
    assertThat((String) problem.get("detail"))
        .isNotBlank()
        .hasSizeLessThanOrEqualTo(1_000)
        .doesNotContain("Exception", "org.postgresql", "java.", "\tat ", "SQLSTATE");
    assertThat(snapshot()).as("every table and sequence").isEqualTo(before);
  }

  private HttpResponse<String> send(Case hostile, long ended)
      throws IOException, InterruptedException {
    String path =
        hostile
            .path()
            .replace("{run}", Long.toString(run))
            .replace("{ended}", Long.toString(ended))
            .replace("{target}", target);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(server.getURL() + path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer dev-operator");
    Map<String, String> headers = new LinkedHashMap<>();
    if (hostile.body() != null) {
      headers.put("Content-Type", "application/json");
    }
    headers.putAll(hostile.headers());
    headers.forEach(
        (name, value) -> {
          if (value != null) {
            request.header(name, value);
          }
        });
    String body =
        hostile.body() == null
            ? null
            : hostile.body().replace("{backfill}", backfill).replace("{target}", target);
    request.method(
        hostile.method(), body == null ? BodyPublishers.noBody() : BodyPublishers.ofString(body));
    return http.send(request.build(), BodyHandlers.ofString());
  }

  /**
   * A fingerprint of every row version of every Dripline table and the value of every sequence.
   * PostgreSQL writes a row (insert, update, even one to the same values) only as a new row version
   * with its writing transaction's {@code xmin} and a new {@code ctid}, so per table the row count
   * and the sums of both change with any write that commits, and no row's text has to be built and
   * sorted (that made the corpus take minutes once earlier tests had filled {@code batches}). The
   * audit trail ({@code audit_events}) is left out: it records each rejected action, as it should.
   */
  private Map<String, String> snapshot() {
    return database.withConnection(
        connection -> {
          List<String> tables = new ArrayList<>();
          try (PreparedStatement select =
                  connection.prepareStatement(
                      "select tablename from pg_tables where schemaname = current_schema()"
                          + " and tablename not in ('flyway_schema_history', 'audit_events')"
                          + " order by tablename");
              ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
              tables.add(rs.getString(1));
            }
          }
          Map<String, String> fingerprint = new TreeMap<>();
          for (String table : tables) {
            try (PreparedStatement select =
                    connection.prepareStatement(
                        "select count(*) || ' rows, versions '"
                            + " || coalesce(sum(xmin::text::bigint), 0)"
                            + " || '/' || coalesce(sum(hashtextextended(ctid::text, 0)), 0)"
                            + " from \""
                            + table
                            + "\" t");
                ResultSet rs = select.executeQuery()) {
              rs.next();
              fingerprint.put(table, rs.getString(1));
            }
          }
          try (PreparedStatement select =
                  connection.prepareStatement(
                      "select sequencename, coalesce(last_value::text, 'unused') from pg_sequences"
                          + " where schemaname = current_schema()"
                          + " and sequencename <> 'audit_events_id_seq'");
              ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
              fingerprint.put("sequence " + rs.getString(1), rs.getString(2));
            }
          }
          return fingerprint;
        });
  }

  private static Case request(
      String name, String method, String path, String body, int status, String mentions) {
    return new Case(name, method, path, Map.of(), body, status, mentions);
  }

  private static Case createRun(String name, String body, int status, String mentions) {
    return request("create run: " + name, "POST", "/api/runs", body, status, mentions);
  }

  private static Case patchRun(String name, String body, int status, String mentions) {
    return request("change cap: " + name, "PATCH", "/api/runs/{run}", body, status, mentions);
  }

  private static Case createTarget(String name, String body, int status, String mentions) {
    return request("create target: " + name, "POST", "/api/targets", body, status, mentions);
  }

  private static Case liveBatch(String name, String body, int status, String mentions) {
    return request(
        "live batch: " + name,
        "POST",
        "/api/targets/{target}/live-batches",
        body,
        status,
        mentions);
  }

  /** A run of the fixture definition with the given options and more fields. */
  private static String run(String options, String moreFields) {
    return "{\"backfill\":\"{backfill}\",\"options\":" + options + moreFields + "}";
  }

  /** A target of the fixture definition with the given name (as JSON) and more fields. */
  private static String target(String nameJson, String moreFields) {
    return "{\"name\":"
        + nameJson
        + ",\"backfill\":\"{backfill}\",\"options\":{\"items\":1}"
        + moreFields
        + "}";
  }

  private static String abbreviated(String text) {
    return text == null || text.length() <= 200 ? text : text.substring(0, 200) + "…";
  }
}
