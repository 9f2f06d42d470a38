package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.net.URI;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A command that calls the API: the connection options (also accepted before the command, on {@code
 * dripline} itself), the client, and the output the command writes to. {@link #execute} returns the
 * exit code; an {@link ApiFailure} it throws is printed and mapped by {@link DriplineCli}.
 */
abstract class ApiCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--url",
      paramLabel = "<url>",
      description =
          "The API's base URL (default: $DRIPLINE_URL, else " + DriplineCli.DEFAULT_URL + ").")
  String url;

  @Option(
      names = "--token",
      paramLabel = "<token>",
      description = "The bearer token (default: $DRIPLINE_TOKEN).")
  String token;

  @Option(names = "--json", description = "Print the API's JSON unchanged instead of tables.")
  boolean json;

  private ApiClient api;

  @Override
  public final Integer call() {
    return execute();
  }

  /** Does the command's work and returns its exit code. */
  abstract int execute();

  final DriplineCli cli() {
    return (DriplineCli) spec.root().userObject();
  }

  final ApiClient api() {
    if (api == null) {
      String base = cli().url(url);
      URI uri;
      try {
        uri = URI.create(base);
      } catch (IllegalArgumentException e) {
        throw new ApiFailure(ExitCode.USAGE, "not a URL: " + base);
      }
      if (uri.getScheme() == null || uri.getHost() == null) {
        throw new ApiFailure(ExitCode.USAGE, "not an http(s) URL: " + base);
      }
      api = new ApiClient(uri, cli().token(token));
    }
    return api;
  }

  final boolean json() {
    return json || cli().json();
  }

  final PrintWriter out() {
    return cli().out();
  }

  /** Prints the answer's body unchanged, if it has one (for {@code --json}). */
  final void printBody(ApiReply reply) {
    if (!reply.body().isEmpty()) {
      out().println(reply.body());
    }
  }

  /**
   * Prints the answer: with {@code --json} its body unchanged, else what {@code text} writes of its
   * JSON. Returns {@link ExitCode#OK}.
   */
  final int print(ApiReply reply, Consumer<JsonNode> text) {
    if (json()) {
      printBody(reply);
    } else {
      text.accept(reply.json());
    }
    return ExitCode.OK;
  }

  /**
   * Prints a page of {@code noun} (the API's {@code items}, {@code total}, {@code page} and {@code
   * size}): with {@code --json} its body unchanged, else {@code table} with the row {@code row}
   * adds for each item and the {@link #pageFooter}, or {@code no <noun>} when there are none at
   * all. Returns {@link ExitCode#OK}.
   */
  final int printPage(ApiReply reply, String noun, Table table, Consumer<JsonNode> row) {
    return print(
        reply,
        page -> {
          page.path("items").forEach(row);
          if (table.isEmpty() && page.path("total").asLong() == 0) {
            out().println("no " + noun);
          } else {
            table.print(out());
            out().println(pageFooter(page, noun));
          }
        });
  }

  /** Prints {@code label value} lines, labels padded to one width; null values print as -. */
  final void printFields(Object... labelsAndValues) {
    int width = 0;
    for (int i = 0; i < labelsAndValues.length; i += 2) {
      width = Math.max(width, labelsAndValues[i].toString().length());
    }
    for (int i = 0; i < labelsAndValues.length; i += 2) {
      String label = labelsAndValues[i].toString();
      Object value = labelsAndValues[i + 1];
      out().println(label + " ".repeat(width - label.length() + 2) + (value == null ? "-" : value));
    }
  }

  /**
   * A page's footer, e.g. {@code runs 21–40 of 45 (next: --page 2)}; pages count from 0, as the
   * API's do.
   */
  static String pageFooter(JsonNode page, String noun) {
    long total = page.path("total").asLong();
    int number = page.path("page").asInt();
    int size = Math.max(1, page.path("size").asInt(1));
    long from = (long) number * size + 1;
    long to = Math.min(total, (long) (number + 1) * size);
    if (from > total) {
      return "no " + noun + " on page " + number + " (" + Figures.count(total) + " in all)";
    }
    String footer =
        noun + " " + Figures.count(from) + "–" + Figures.count(to) + " of " + Figures.count(total);
    return to < total ? footer + " (next: --page " + (number + 1) + ")" : footer;
  }
}
