package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code dripline pools ...}: pools of batch slots shared across runs ({@code /api/pools}). */
@Command(
    name = "pools",
    description = "List pools; create or resize one.",
    subcommands = {PoolsCommand.ListPools.class, PoolsCommand.Set.class})
final class PoolsCommand {
  private PoolsCommand() {}

  static void print(Table table, JsonNode pool) {
    table.row(
        pool.path("name").asText(),
        pool.path("size").asText(),
        pool.path("inUse").asText(),
        pool.path("waiting").asText());
  }

  @Command(name = "list", description = "List every pool: size, slots in use, runs waiting.")
  static final class ListPools extends ApiCommand {
    @Override
    int execute() {
      ApiReply reply = api().get("api/pools");
      if (json()) {
        printBody(reply);
        return ExitCode.OK;
      }
      Table table = new Table("NAME", "SIZE", "IN USE", "WAITING");
      for (JsonNode pool : reply.json()) {
        print(table, pool);
      }
      if (table.isEmpty()) {
        out().println("no pools");
      } else {
        table.print(out());
      }
      return ExitCode.OK;
    }
  }

  @Command(
      name = "set",
      description = "Create a pool, or resize it (a smaller size pre-empts nothing).")
  static final class Set extends ApiCommand {
    @Parameters(index = "0", paramLabel = "<name>", description = "The pool's name.")
    String name;

    @Parameters(index = "1", paramLabel = "<size>", description = "Batches in flight at once.")
    long size;

    @Override
    int execute() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("size", size);
      ApiReply reply = api().put("api/pools/" + ApiClient.segment(name), body);
      if (json()) {
        printBody(reply);
        return ExitCode.OK;
      }
      Table table = new Table("NAME", "SIZE", "IN USE", "WAITING");
      print(table, reply.json());
      table.print(out());
      return ExitCode.OK;
    }
  }
}
