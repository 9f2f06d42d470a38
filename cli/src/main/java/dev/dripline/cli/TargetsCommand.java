package dev.dripline.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
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
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code dripline targets ...}: targets and their live batches ({@code /api/targets}). */
@Command(
    name = "targets",
    description = "List, show, create, replan and delete targets; queue live batches.",
    subcommands = {
      TargetsCommand.ListTargets.class,
      TargetsCommand.Show.class,
      TargetsCommand.Create.class,
      TargetsCommand.Delete.class,
      TargetsCommand.Replan.class,
      TargetsCommand.LiveBatch.class
    })
final class TargetsCommand {
  private TargetsCommand() {}

  static String targetPath(String name) {
    return "api/targets/" + ApiClient.segment(name);
  }

  @Command(name = "list", description = "List targets by name, a page at a time.")
  static final class ListTargets extends ApiCommand {
    @Option(
        names = "--state",
        paramLabel = "<state>",
        description =
            "Only targets in this state: pending_backfill, backfilling, primed, needs_resync.")
    String state;

    @Option(names = "--group", paramLabel = "<group>", description = "Only targets of this group.")
    String group;

    @Option(names = "--page", paramLabel = "<n>", description = "The page, from 0 (default 0).")
    Integer page;

    @Option(names = "--size", paramLabel = "<n>", description = "Targets per page (default 20).")
    Integer size;

    @Override
    int execute() {
      Map<String, Object> query = new LinkedHashMap<>();
      query.put("state", state);
      query.put("group", group);
      query.put("page", page);
      query.put("size", size);
      Table table =
          new Table(
              "NAME", "BACKFILL", "GROUP", "STATE", "FAILURES", "NEXT ATTEMPT", "BLOCKED", "RUN");
      return printPage(
          api().get(ApiClient.withQuery("api/targets", query)),
          "targets",
          table,
          target -> row(table, target));
    }

    private static void row(Table table, JsonNode target) {
      table.row(
          target.path("name").asText(),
          target.path("backfill").asText(),
          Figures.text(target.path("group")),
          target.path("state").asText() + (target.path("failing").asBoolean() ? " FAILING" : ""),
          target.path("consecutiveFailures").asText(),
          Figures.text(target.path("nextAttemptAt")),
          target.path("blockedLiveBatches").asText(),
          Figures.text(target.path("currentRunId")));
    }
  }

  @Command(name = "show", description = "Show one target.")
  static final class Show extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The target's name.")
    String name;

    @Override
    int execute() {
      return print(api().get(targetPath(name)), this::printTarget);
    }

    private void printTarget(JsonNode target) {
      JsonNode oldest = target.path("oldestBlockedAgeSeconds");
      printFields(
          "target",
          target.path("name").asText() + "  " + target.path("backfill").asText(),
          "state",
          target.path("state").asText() + (target.path("failing").asBoolean() ? " (failing)" : ""),
          "group",
          Figures.text(target.path("group")),
          "options",
          target.path("options").toString(),
          "failures in a row",
          target.path("consecutiveFailures").asText(),
          "first failed",
          Figures.text(target.path("firstFailedAt")),
          "last attempt",
          Figures.text(target.path("lastAttemptAt")),
          "next attempt",
          Figures.text(target.path("nextAttemptAt")),
          "last error",
          Figures.text(target.path("lastError")),
          "current run",
          Figures.text(target.path("currentRunId")),
          "blocked live batches",
          target.path("blockedLiveBatches").asText()
              + (oldest.isNumber() ? " (oldest " + Figures.duration(oldest.asLong()) + ")" : ""),
          "created",
          Figures.text(target.path("createdAt")),
          "updated",
          Figures.text(target.path("updatedAt")));
    }
  }

  @Command(
      name = "create",
      description = "Register a target: its backfill runs until it is primed.")
  static final class Create extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The target's name.")
    String name;

    @Parameters(index = "1", paramLabel = "<backfill>", description = "The backfill it runs.")
    String backfill;

    @Option(
        names = {"-o", "--option"},
        paramLabel = "<name=value>",
        description =
            "An option of the backfill, typed as its catalogue declares; name:=<json> sends JSON"
                + " as written. Repeatable.")
    List<String> options = new ArrayList<>();

    @Option(names = "--group", paramLabel = "<group>", description = "The target's group.")
    String group;

    @Override
    int execute() {
      boolean typed = options.stream().anyMatch(option -> !option.contains(":="));
      JsonNode definition =
          typed ? OptionValues.definition(api(), backfill) : MissingNode.getInstance();
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("name", name);
      body.put("backfill", backfill);
      body.set("options", OptionValues.parse(options, definition, spec));
      if (group != null) {
        body.put("group", group);
      }
      return print(
          api().post("api/targets", body),
          target ->
              out().println("created target " + name + " (" + target.path("state").asText() + ")"));
    }
  }

  @Command(name = "delete", description = "Remove a target and its live batches; stop its run.")
  static final class Delete extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The target's name.")
    String name;

    @Override
    int execute() {
      return print(
          api().delete(targetPath(name)), answer -> out().println("deleted target " + name));
    }
  }

  @Command(
      name = "replan",
      description =
          "Stop a target's run, reset its failure streak and plan its backfill again"
              + " (--dry-run: only say what would happen).")
  static final class Replan extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The target's name.")
    String name;

    @Option(names = "--dry-run", description = "Say what a replan would do, do nothing.")
    boolean dryRun;

    @Override
    int execute() {
      return print(
          api().post(targetPath(name) + "/replan" + (dryRun ? "?dryRun=true" : ""), null),
          this::printReplan);
    }

    private void printReplan(JsonNode answer) {
      if (dryRun) {
        printFields(
            "target",
            name,
            "now",
            answer.path("previousState").asText()
                + ", "
                + answer.path("previousConsecutiveFailures").asText()
                + " failures in a row",
            "would stop run",
            Figures.text(answer.path("wouldCancelRunId")),
            "would become",
            Figures.text(answer.path("resultingState")));
      } else {
        printFields(
            "target",
            name,
            "was",
            answer.path("previousState").asText()
                + ", "
                + answer.path("previousConsecutiveFailures").asText()
                + " failures in a row",
            "stopped run",
            Figures.text(answer.path("cancelledRunId")),
            "now",
            Figures.text(answer.path("state")));
      }
    }
  }

  @Command(
      name = "live-batch",
      description = "Queue a live batch for a target; applied in order once it is primed.")
  static final class LiveBatch extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The target's name.")
    String name;

    @Parameters(
        index = "1",
        paramLabel = "<payload>",
        description = "The batch's payload: a JSON object, e.g. '{\"ids\": [1, 2]}'.")
    String payload;

    @Override
    int execute() {
      JsonNode parsed;
      try {
        parsed = ApiClient.JSON.readTree(payload);
      } catch (JsonProcessingException e) {
        parsed = MissingNode.getInstance();
      }
      if (parsed == null || parsed.isMissingNode()) {
        throw new ParameterException(spec.commandLine(), "<payload> is not JSON: " + payload);
      }
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.set("payload", parsed);
      return print(
          api().post(targetPath(name) + "/live-batches", body),
          batch ->
              out()
                  .println(
                      "queued live batch "
                          + batch.path("id").asText()
                          + " for target "
                          + name
                          + " ("
                          + batch.path("status").asText()
                          + ", "
                          + batch.path("queuedAhead").asText()
                          + " ahead of it)"));
    }
  }
}
