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

  /** A table of pools, without rows. */
  static Table table() {
    return new Table("NAME", "SIZE", "IN USE", "WAITING");
  }

  /** Adds {@code pool}'s row to {@code table}. */
  static void row(Table table, JsonNode pool) {
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
      return print(
          api().get("api/pools"),
          pools -> {
            Table table = table();
            pools.forEach(pool -> row(table, pool));
            if (table.isEmpty()) {
              out().println("no pools");
            } else {
              table.print(out());
            }
          });
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
      return print(
          api().put("api/pools/" + ApiClient.segment(name), body),
          pool -> {
            Table table = table();
            row(table, pool);
            table.print(out());
          });
    }
  }
}
