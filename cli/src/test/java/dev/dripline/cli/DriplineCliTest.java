package dev.dripline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The command line against {@link FakeApi}: requests sent, output, exit codes. */
class DriplineCliTest {
  private static final String RUN_7 =
      """
      {"id": 7, "backfill": "example.sleep", "options": {"items": 60}, "batchSize": 5,
       "maxRecords": null, "maxParallelBatches": 3, "requestedMaxParallelBatches": 3,
       "startAt": null, "createdBy": "operator", "createdAt": "2026-12-07T00:00:00Z",
       "updatedAt": "2026-12-07T00:00:05Z", "startedAt": "2026-12-07T00:00:01Z",
       "finishedAt": null, "status": "%s", "error": %s, "workflowId": "dripline-run-7",
       "batchCounts": {"pending": 4, "enqueued": 0, "running": 2, "completed": 6, "failed": 0,
                       "stopped": 0},
       "inFlight": 2,
       "progress": {"totalKeys": 60, "processedKeys": %d, "percent": %d,
                    "throughputPerMinute": 360.0, "etaSeconds": 5, "elapsedSeconds": 5},
       "throttle": {"throttled": false, "since": null, "reasons": []},
       "targetBatchDuration": null, "minBatchSize": null, "maxBatchSize": null,
       "currentBatchSize": 5, "failureBudget": null, "pool": null, "niceRatio": 0.0}
      """;

  private final FakeApi api = new FakeApi();

  @AfterEach
  void close() {
    api.close();
  }

  private static String run7(String status, String error, int processed) {
    return RUN_7.formatted(status, error, processed, processed * 100 / 60);
  }

  private CliRun dripline(String... args) {
    return CliRun.of(Map.of("DRIPLINE_URL", api.url(), "DRIPLINE_TOKEN", "env-token"), false, args);
  }

  @Test
  void showPrintsTheRunAndSendsTheTokenFromTheEnvironment() {
    api.on("GET", "/api/runs/7", 200, run7("running", "null", 30));

    CliRun run = dripline("runs", "show", "7");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("run          7  example.sleep")
        .contains("status       running")
        .contains(
            "progress     [###############---------------]   50%  30/60 keys  360/min  ETA 5s")
        .contains("batches      pending 4, running 2, completed 6; in flight 2")
        .contains("throttle     not throttled");
    assertThat(run.err()).isEmpty();
    assertThat(api.requests())
        .singleElement()
        .satisfies(request -> assertThat(request.authorization()).isEqualTo("Bearer env-token"));
  }

  @Test
  void jsonPrintsTheApisBodyUnchangedAndOptionsOnTheCommandLineWin() {
    String body = run7("running", "null", 30);
    api.on("GET", "/api/runs/7", 200, body);

    CliRun run = dripline("--json", "runs", "show", "7", "--token", "flag-token");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).isEqualTo(body + System.lineSeparator());
    assertThat(api.requests().get(0).authorization()).isEqualTo("Bearer flag-token");
  }

  @Test
  void listPrintsATableAndPassesTheFilters() {
    api.on(
        "GET",
        "/api/runs?status=running&backfill=example.sleep&size=1",
        200,
        "{\"items\": ["
            + run7("running", "null", 30)
            + "], \"page\": 0, \"size\": 1, \"total\": 3}");

    CliRun run =
        dripline(
            "runs", "list", "--status", "running", "--backfill", "example.sleep", "--size", "1");

    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out().lines())
        .containsExactly(
            "ID  BACKFILL       STATUS   DONE  KEYS   PER MIN  ETA  CREATED",
            "7   example.sleep  running  50%   30/60  360      5s   2026-12-07T00:00:00Z",
            "runs 1–1 of 3 (next: --page 1)");
  }

  @Test
  void aConflictIsRefusedWithTheApisDetailOnStderr() {
    api.on(
        "POST",
        "/api/runs/7/stop",
        409,
        "{\"status\": 409, \"detail\": \"run 7 is completed; only a pending or running run can be"
            + " stopped\"}");

    CliRun run = dripline("runs", "stop", "7");

    assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .isEqualTo(
            "dripline: run 7 is completed; only a pending or running run can be stopped"
                + System.lineSeparator());
  }

  @Test
  void aValidationErrorPrintsEachFieldAndTheStartSendsTypedOptions() {
    api.on(
        "GET",
        "/api/backfills",
        200,
        "[{\"name\": \"example.sleep\", \"options\": [{\"name\": \"items\", \"type\": \"integer\"},"
            + " {\"name\": \"sleepMs\", \"type\": \"integer\"}]}]");
    api.on(
        "POST",
        "/api/runs",
        400,
        "{\"status\": 400, \"detail\": \"the request has 2 invalid fields\", \"errors\": ["
            + "{\"field\": \"options.items\", \"message\": \"must be an integer\"},"
            + "{\"field\": \"batchSize\", \"message\": \"must be at least 1\"}]}");

    CliRun run =
        dripline(
            "runs",
            "start",
            "example.sleep",
            "-o",
            "items=many",
            "--option",
            "sleepMs=5",
            "--batch-size",
            "0");

    assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
    assertThat(run.err().lines())
        .containsExactly(
            "dripline: the request has 2 invalid fields",
            "  options.items: must be an integer",
            "  batchSize: must be at least 1");
    assertThat(api.requests().get(1).body())
        .isEqualTo(
            "{\"backfill\":\"example.sleep\",\"options\":{\"items\":\"many\",\"sleepMs\":5},"
                + "\"batchSize\":0}");
  }

  @Test
  void aSingleErrorThatIsTheDetailIsPrintedOnce() {
    api.on(
        "PATCH",
        "/api/throttle/checks/nope",
        400,
        "{\"status\": 400, \"detail\": \"name: 'nope' is not a configured check\", \"errors\": ["
            + "{\"field\": \"name\", \"message\": \"'nope' is not a configured check\"}]}");

    CliRun run = dripline("throttle", "set", "nope", "--threshold", "3");

    assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
    assertThat(run.err().lines())
        .containsExactly("dripline: name: 'nope' is not a configured check");
    assertThat(api.requests().get(0).body()).isEqualTo("{\"threshold\":3.0}");
  }

  @Test
  void statusesMapToTheirExitCodes() {
    api.on("GET", "/api/runs/404", 404, "{\"status\": 404, \"detail\": \"no run with id 404\"}");
    api.on("GET", "/api/runs/401", 401, "{\"status\": 401, \"detail\": \"needs a bearer token\"}");
    api.on("DELETE", "/api/runs/403", 403, "{\"status\": 403, \"detail\": \"viewer\"}");
    api.on("GET", "/api/runs/500", 500, "<html>oops</html>");
    api.on("GET", "/api/runs/503", 503, "{\"status\": 503, \"detail\": \"Temporal is down\"}");

    assertThat(dripline("runs", "show", "404").exitCode()).isEqualTo(ExitCode.NOT_FOUND);
    assertThat(dripline("runs", "show", "401").exitCode()).isEqualTo(ExitCode.AUTH);
    CliRun noToken = CliRun.of(Map.of("DRIPLINE_URL", api.url()), false, "runs", "show", "401");
    assertThat(noToken.exitCode()).isEqualTo(ExitCode.AUTH);
    assertThat(noToken.err().lines())
        .containsExactly(
            "dripline: needs a bearer token",
            "  no token was sent: set DRIPLINE_TOKEN or give --token");
    assertThat(dripline("runs", "delete", "403").exitCode()).isEqualTo(ExitCode.AUTH);
    CliRun serverError = dripline("runs", "show", "500");
    assertThat(serverError.exitCode()).isEqualTo(ExitCode.SERVER);
    assertThat(serverError.err()).contains("HTTP 500: <html>oops</html>");
    assertThat(dripline("runs", "show", "503").err()).contains("Temporal is down");
  }

  @Test
  void usageErrorsExit2AndAnUnreachableServerExits5() {
    assertThat(dripline("runs", "show", "seven").exitCode()).isEqualTo(ExitCode.USAGE);
    assertThat(dripline("runs").exitCode()).isEqualTo(ExitCode.USAGE);
    assertThat(dripline("nothing").exitCode()).isEqualTo(ExitCode.USAGE);
    assertThat(dripline("runs", "watch", "7", "--interval", "0").exitCode())
        .isEqualTo(ExitCode.USAGE);
    CliRun help = dripline("runs", "watch", "--help");
    assertThat(help.exitCode()).isZero();
    assertThat(help.out()).contains("--interval=<seconds>", "Exit codes: 0 ok");
    assertThat(dripline("pools", "-V").out()).startsWith("dripline ");
    assertThat(api.requests()).isEmpty();

    String url = api.url();
    api.close();
    CliRun unreachable = CliRun.of(Map.of("DRIPLINE_URL", url), false, "runs", "show", "7");
    assertThat(unreachable.exitCode()).isEqualTo(ExitCode.SERVER);
    assertThat(unreachable.err())
        .startsWith("dripline: cannot reach Dripline at " + url)
        .contains("ConnectException");
  }

  @Test
  void watchPrintsALinePerChangeAndExits0WhenTheRunCompletes() {
    api.on("GET", "/api/runs/7", 200, run7("running", "null", 0))
        .on("GET", "/api/runs/7", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/7", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/7", 200, run7("completed", "null", 60));

    CliRun run = dripline("runs", "watch", "7", "--interval", "0.01");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out().lines())
        .hasSize(3)
        .allSatisfy(line -> assertThat(line).startsWith("run 7 "));
    assertThat(run.out().lines().toList().get(2)).contains("completed", "100%", "60/60 keys");
    assertThat(run.out()).doesNotContain("\r");
    assertThat(api.requests()).hasSize(4);
  }

  @Test
  void watchExits1WithTheErrorWhenTheRunFailsAndRedrawsOnATerminal() {
    api.on("GET", "/api/runs/7", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/7", 200, run7("failed", "\"batch 3 failed: boom\"", 30));

    CliRun run =
        CliRun.of(
            Map.of("DRIPLINE_URL", api.url()), true, "runs", "watch", "7", "--interval", "0.01");

    assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
    assertThat(run.out()).startsWith("\rrun 7 running").contains("\rrun 7 failed").endsWith("\n");
    assertThat(run.err()).contains("dripline: run 7 failed: batch 3 failed: boom");
  }

  @Test
  void watchWaitsOutAFailingApiButNotForeverAndNotANotFound() {
    api.on("GET", "/api/runs/7", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/7", 503, "{\"status\": 503, \"detail\": \"Temporal is down\"}")
        .on("GET", "/api/runs/7", 503, "{\"status\": 503, \"detail\": \"Temporal is down\"}")
        .on("GET", "/api/runs/7", 200, run7("completed", "null", 60));
    api.on("GET", "/api/runs/8", 503, "{\"status\": 503, \"detail\": \"Temporal is down\"}");
    api.on("GET", "/api/runs/9", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/9", 404, "{\"status\": 404, \"detail\": \"no run with id 9\"}");

    CliRun recovered = dripline("runs", "watch", "7", "--interval", "0.01");
    CliRun gaveUp = dripline("runs", "watch", "8", "--interval", "0.01", "--outage", "0");
    CliRun deleted = dripline("runs", "watch", "9", "--interval", "0.01");

    assertThat(recovered.exitCode()).isZero();
    assertThat(recovered.err().lines())
        .containsExactly(
            "dripline: Temporal is down; still watching", "dripline: the API answers again");
    assertThat(recovered.out().lines()).hasSize(2);
    assertThat(gaveUp.exitCode()).isEqualTo(ExitCode.SERVER);
    assertThat(gaveUp.err()).endsWith("dripline: Temporal is down" + System.lineSeparator());
    assertThat(deleted.exitCode()).isEqualTo(ExitCode.NOT_FOUND);
  }

  @Test
  void watchWithJsonPrintsEachChangedAnswerAsOneLine() {
    api.on("GET", "/api/runs/7", 200, run7("running", "null", 30))
        .on("GET", "/api/runs/7", 200, run7("stopped", "null", 30));

    CliRun run = dripline("runs", "watch", "7", "--interval", "0.01", "--json");

    assertThat(run.exitCode()).isEqualTo(ExitCode.REFUSED);
    assertThat(run.out().lines())
        .hasSize(2)
        .allSatisfy(line -> assertThat(ApiClient.parse(line).path("id").asLong()).isEqualTo(7));
  }

  @Test
  void poolsThrottleAndTargetsCallTheirEndpoints() {
    api.on(
        "PUT",
        "/api/pools/slow-db",
        200,
        "{\"name\":\"slow-db\",\"size\":2,\"inUse\":0,\"waiting\":0}");
    api.on(
        "POST",
        "/api/throttle/hold",
        200,
        "{\"hold\": {\"who\": \"operator\", \"since\": \"2026-12-07T00:00:00Z\","
            + " \"reason\": \"failover drill\"}, \"checks\": []}");
    api.on(
        "POST",
        "/api/targets/acme/replan?dryRun=true",
        200,
        "{\"name\": \"acme\", \"dryRun\": true, \"previousState\": \"backfilling\","
            + " \"previousConsecutiveFailures\": 4, \"wouldCancelRunId\": 12,"
            + " \"resultingState\": \"pending_backfill\"}");

    CliRun pool = dripline("pools", "set", "slow-db", "2");
    CliRun hold = dripline("throttle", "hold", "failover", "drill");
    CliRun replan = dripline("targets", "replan", "acme", "--dry-run");

    assertThat(pool.exitCode()).isZero();
    assertThat(pool.out()).contains("slow-db  2");
    assertThat(hold.out())
        .startsWith("brake: ON since 2026-12-07T00:00:00Z by operator: failover drill");
    assertThat(replan.out()).contains("would stop run  12");
    assertThat(api.requests())
        .extracting(FakeApi.Request::body)
        .containsExactly("{\"size\":2}", "{\"reason\":\"failover drill\"}", "");
  }
}
