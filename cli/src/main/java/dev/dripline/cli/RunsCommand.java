package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dripline runs ...}: list, show, start, watch and control runs ({@code /api/runs}). */
@Command(
    name = "runs",
    description = "List, show, start, watch and control runs.",
    subcommands = {
      RunsCommand.ListRuns.class,
      RunsCommand.Show.class,
      RunsCommand.Batches.class,
      RunsCommand.Start.class,
      RunWatch.class,
      RunsCommand.Stop.class,
      RunsCommand.Pause.class,
      RunsCommand.Resume.class,
      RunsCommand.Retry.class,
      RunsCommand.Cap.class,
      RunsCommand.Delete.class
    })
final class RunsCommand {
  private RunsCommand() {}

  static String runPath(long id) {
    return "api/runs/" + id;
  }

  @Command(name = "list", description = "List runs, newest first, a page at a time.")
  static final class ListRuns extends ApiCommand {
    @Option(
        names = "--status",
        paramLabel = "<status>",
        description =
            "Only runs in this status: pending, running, paused, completed, failed, stopped.")
    String status;

    @Option(
        names = "--backfill",
        paramLabel = "<name>",
        description = "Only runs of this backfill.")
    String backfill;

    @Option(names = "--page", paramLabel = "<n>", description = "The page, from 0 (default 0).")
    Integer page;

    @Option(
        names = "--size",
        paramLabel = "<n>",
        description = "Runs per page, 1 to 200 (default 20).")
    Integer size;

    @Override
    int execute() {
      Map<String, Object> query = new LinkedHashMap<>();
      query.put("status", status);
      query.put("backfill", backfill);
      query.put("page", page);
      query.put("size", size);
      Table table =
          new Table("ID", "BACKFILL", "STATUS", "DONE", "KEYS", "PER MIN", "ETA", "CREATED");
      return printPage(
          api().get(ApiClient.withQuery("api/runs", query)), "runs", table, run -> row(table, run));
    }

    private static void row(Table table, JsonNode run) {
      JsonNode progress = run.path("progress");
      JsonNode eta = progress.path("etaSeconds");
      table.row(
          run.path("id").asText(),
          run.path("backfill").asText(),
          run.path("status").asText()
              + (ProgressLine.holds(run.path("throttle")) == null ? "" : " (throttled)"),
          progress.path("percent").asInt() + "%",
          Figures.count(progress.path("processedKeys").asLong())
              + "/"
              + (progress.path("totalKeys").isNumber()
                  ? Figures.count(progress.path("totalKeys").asLong())
                  : "?"),
          Figures.perMinute(progress.path("throughputPerMinute").asDouble()),
          eta.isNumber() ? Figures.duration(eta.asLong()) : null,
          Figures.text(run.path("createdAt")));
    }
  }

  @Command(name = "show", description = "Show one run.")
  static final class Show extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    @Override
    int execute() {
      return print(api().get(runPath(id)), this::printRun);
    }

    private void printRun(JsonNode run) {
      printFields(
          "run",
          run.path("id").asText() + "  " + run.path("backfill").asText(),
          "status",
          run.path("status").asText(),
          "progress",
          ProgressLine.figures(run),
          "batches",
          batchCounts(run.path("batchCounts")) + "; in flight " + run.path("inFlight").asText(),
          "options",
          run.path("options").toString(),
          "batch size",
          run.path("batchSize").asText() + " (now " + run.path("currentBatchSize").asText() + ")",
          "cap",
          run.path("maxParallelBatches").asText()
              + (run.path("requestedMaxParallelBatches").isNumber()
                  ? " (requested " + run.path("requestedMaxParallelBatches").asText() + ")"
                  : ""),
          "max records",
          Figures.text(run.path("maxRecords")),
          "pool",
          Figures.text(run.path("pool")),
          "throttle",
          throttle(run.path("throttle")),
          "created",
          Figures.text(run.path("createdAt")) + " by " + run.path("createdBy").asText(),
          "start at",
          Figures.text(run.path("startAt")),
          "started",
          Figures.text(run.path("startedAt")),
          "finished",
          Figures.text(run.path("finishedAt")),
          "error",
          Figures.text(run.path("error")),
          "workflow",
          Figures.text(run.path("workflowId")));
    }

    /** {@code completed 12, failed 1}: the statuses that have batches, in the API's order. */
    static String batchCounts(JsonNode counts) {
      List<String> parts = new ArrayList<>();
      for (Map.Entry<String, JsonNode> field : counts.properties()) {
        if (field.getValue().asLong() > 0) {
          parts.add(field.getKey() + " " + Figures.count(field.getValue().asLong()));
        }
      }
      return parts.isEmpty() ? "none yet" : String.join(", ", parts);
    }

    /** {@code held since ...: brake, replica-lag 12.5 > 10.0}, or {@code not throttled}. */
    static String throttle(JsonNode throttle) {
      if (!throttle.path("throttled").asBoolean(false)) {
        return throttle.isObject() ? "not throttled" : null;
      }
      List<String> reasons = new ArrayList<>();
      for (JsonNode reason : throttle.path("reasons")) {
        String text = reason.path("check").asText();
        if (reason.path("threshold").isNumber()) {
          text +=
              " "
                  + (reason.path("value").isNumber() ? reason.path("value").asText() : "unknown")
                  + " (threshold "
                  + reason.path("threshold").asText()
                  + ")";
        }
        reasons.add(text);
      }
      return "held since " + throttle.path("since").asText() + ": " + String.join(", ", reasons);
    }
  }

  @Command(
      name = "batches",
      description = "List a run's batches in number order, with their errors.")
  static final class Batches extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    @Option(
        names = "--status",
        paramLabel = "<status>",
        description = "Only batches in this status, e.g. failed.")
    String status;

    @Option(names = "--page", paramLabel = "<n>", description = "The page, from 0 (default 0).")
    Integer page;

    @Option(names = "--size", paramLabel = "<n>", description = "Batches per page (default 20).")
    Integer size;

    @Override
    int execute() {
      Map<String, Object> query = new LinkedHashMap<>();
      query.put("status", status);
      query.put("page", page);
      query.put("size", size);
      Table table = new Table("NUMBER", "KEYS", "SIZE", "STATUS", "ATTEMPTS", "ERROR");
      return printPage(
          api().get(ApiClient.withQuery(runPath(id) + "/batches", query)),
          "batches",
          table,
          batch ->
              table.row(
                  batch.path("number").asText(),
                  Figures.text(batch.path("startKey")) + ".." + Figures.text(batch.path("endKey")),
                  batch.path("size").asText(),
                  batch.path("status").asText(),
                  batch.path("attempts").asText(),
                  Figures.text(batch.path("error"))));
    }
  }

  @Command(
      name = "start",
      description = "Start a run of a backfill (or, with --dry-run, preview what it would plan).")
  static final class Start extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<backfill>", description = "The backfill's name.")
    String backfill;

    @Option(
        names = {"-o", "--option"},
        paramLabel = "<name=value>",
        description =
            "An option of the backfill, typed as its catalogue declares; name:=<json> sends JSON"
                + " as written. Repeatable.")
    List<String> options = new ArrayList<>();

    @Option(names = "--batch-size", paramLabel = "<n>", description = "Keys per batch.")
    Long batchSize;

    @Option(names = "--max-records", paramLabel = "<n>", description = "Stop after this many keys.")
    Long maxRecords;

    @Option(
        names = "--max-parallel",
        paramLabel = "<n>",
        description = "Batches in flight at once (the run's cap).")
    Long maxParallel;

    @Option(
        names = "--start-at",
        paramLabel = "<instant>",
        description = "Start later, at this ISO-8601 instant, e.g. 2026-12-24T06:00:00Z.")
    String startAt;

    @Option(names = "--pool", paramLabel = "<name>", description = "The pool the run draws from.")
    String pool;

    @Option(
        names = "--dry-run",
        description = "Validate and plan without starting: keys, batches, the first batches.")
    boolean dryRun;

    @Override
    int execute() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("backfill", backfill);
      body.set("options", OptionValues.parse(options, definitionIfNeeded(), spec));
      putIfGiven(body, "batchSize", batchSize);
      putIfGiven(body, "maxRecords", maxRecords);
      putIfGiven(body, "maxParallelBatches", maxParallel);
      if (startAt != null) {
        body.put("startAt", startAt);
      }
      if (pool != null) {
        body.put("pool", pool);
      }
      ApiReply reply = api().post(dryRun ? "api/runs?dryRun=true" : "api/runs", body);
      boolean created = reply.status() == 201;
      return print(reply, answer -> printStarted(answer, created));
    }

    /** The preview of a dry run, or the run created (or made by an earlier request). */
    private void printStarted(JsonNode answer, boolean created) {
      if (dryRun) {
        printDryRun(answer);
        return;
      }
      long id = answer.path("id").asLong();
      out()
          .println(
              (created ? "started run " : "the same request already made run ")
                  + id
                  + " ("
                  + answer.path("backfill").asText()
                  + ", "
                  + answer.path("status").asText()
                  + ")");
      out().println("watch it with: dripline runs watch " + id);
    }

    private JsonNode definitionIfNeeded() {
      boolean typed = options.stream().anyMatch(option -> !option.contains(":="));
      return typed ? OptionValues.definition(api(), backfill) : MissingNode.getInstance();
    }

    private void printDryRun(JsonNode answer) {
      printFields(
          "would start",
          answer.path("wouldCreate").asBoolean() ? "yes" : "no",
          "keys",
          Figures.count(answer.path("totalKeys").asLong())
              + (answer.path("totalKeysExact").asBoolean(true) ? "" : " or more"),
          "batches",
          Figures.count(answer.path("batches").asLong())
              + " of "
              + answer.path("startingBatchSize").asText()
              + " keys",
          "cap",
          answer.path("effectiveMaxParallelBatches").asText(),
          "first key",
          Figures.text(answer.path("firstKey")),
          "last key",
          Figures.text(answer.path("lastKey")));
      Table sample = new Table("FIRST BATCHES", "SIZE");
      for (JsonNode batch : answer.path("sampleBatches")) {
        sample.row(
            Figures.text(batch.path("startKey")) + ".." + Figures.text(batch.path("endKey")),
            batch.path("size").asText());
      }
      if (!sample.isEmpty()) {
        out().println();
        sample.print(out());
      }
    }

    private static void putIfGiven(ObjectNode body, String field, Long value) {
      if (value != null) {
        body.put(field, value);
      }
    }
  }

  /** A run action answered 202: stop, pause, resume. */
  abstract static class Signal extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    /** The action's path segment, e.g. {@code stop}. */
    private final String action;

    /** What the command prints once the API took it, e.g. {@code stopping}. */
    private final String done;

    Signal(String action, String done) {
      this.action = action;
      this.done = done;
    }

    @Override
    int execute() {
      return print(
          api().post(runPath(id) + "/" + action, null),
          answer -> out().println(done + " run " + id));
    }
  }

  @Command(
      name = "stop",
      description = "Stop a run: no new batch starts; batches in flight finish.")
  static final class Stop extends Signal {
    Stop() {
      super("stop", "stopping");
    }
  }

  @Command(name = "pause", description = "Pause a run: batches in flight finish, the others wait.")
  static final class Pause extends Signal {
    Pause() {
      super("pause", "pausing");
    }
  }

  @Command(name = "resume", description = "Resume a paused run.")
  static final class Resume extends Signal {
    Resume() {
      super("resume", "resuming");
    }
  }

  @Command(
      name = "retry",
      description = "Re-queue a run's failed (and, if it was stopped, stopped) batches.")
  static final class Retry extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    @Override
    int execute() {
      return print(
          api().post(runPath(id) + "/retry", null),
          answer ->
              out()
                  .println(
                      "re-queued " + answer.path("requeued").asLong() + " batches of run " + id));
    }
  }

  @Command(name = "cap", description = "Change how many batches of a run may be in flight at once.")
  static final class Cap extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    @Parameters(index = "1", paramLabel = "<n>", description = "The new cap.")
    long maxParallelBatches;

    @Override
    int execute() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("maxParallelBatches", maxParallelBatches);
      return print(
          api().patch(runPath(id), body),
          run ->
              out()
                  .println(
                      "run "
                          + id
                          + ": cap "
                          + run.path("maxParallelBatches").asText()
                          + " (requested "
                          + run.path("requestedMaxParallelBatches").asText()
                          + ")"));
    }
  }

  @Command(name = "delete", description = "Delete a pending or ended run and its batches.")
  static final class Delete extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
    long id;

    @Override
    int execute() {
      return print(api().delete(runPath(id)), answer -> out().println("deleted run " + id));
    }
  }
}
