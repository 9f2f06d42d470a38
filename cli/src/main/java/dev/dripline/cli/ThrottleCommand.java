package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code dripline throttle ...}: the brake and the health checks ({@code /api/throttle}). */
@Command(
    name = "throttle",
    description = "Show the brake and the health checks; hold or release every run; tune a check.",
    subcommands = {
      ThrottleCommand.Show.class,
      ThrottleCommand.Hold.class,
      ThrottleCommand.Release.class,
      ThrottleCommand.SetCheck.class
    })
final class ThrottleCommand {
  private ThrottleCommand() {}

  /** A throttle command: each prints the throttle as the API answers it. */
  abstract static class Action extends ApiCommand {
    /** Prints the throttle as {@code GET /api/throttle} answers it. */
    final void printThrottle(JsonNode throttle) {
      PrintWriter out = out();
      JsonNode hold = throttle.path("hold");
      if (hold.isObject()) {
        out.println(
            "brake: ON since "
                + hold.path("since").asText()
                + " by "
                + hold.path("who").asText()
                + ": "
                + hold.path("reason").asText());
      } else {
        out.println("brake: off");
      }
      Table checks =
          new Table(
              "CHECK", "KIND", "STATE", "VALUE", "THRESHOLD", "RESUME BELOW", "SINCE", "ERROR");
      for (JsonNode check : throttle.path("checks")) {
        checks.row(
            check.path("name").asText() + (check.path("override").isObject() ? " *" : ""),
            check.path("kind").asText(),
            check.path("state").asText() + (check.path("holding").asBoolean() ? " (holding)" : ""),
            Figures.text(check.path("value")),
            check.path("threshold").asText(),
            check.path("resumeBelow").asText(),
            Figures.text(check.path("since")),
            Figures.text(check.path("error")));
      }
      if (checks.isEmpty()) {
        out.println("no health checks configured");
      } else {
        out.println();
        checks.print(out);
        if (throttle.path("checks").findValues("override").stream().anyMatch(JsonNode::isObject)) {
          out.println("* limits changed at runtime (dripline throttle set)");
        }
      }
    }
  }

  @Command(name = "show", description = "Show the brake and every health check's last reading.")
  static final class Show extends Action {
    @Override
    int execute() {
      return print(api().get("api/throttle"), this::printThrottle);
    }
  }

  @Command(
      name = "hold",
      description = "Put the brake on: no new batch of any run starts until released.")
  static final class Hold extends Action {
    @Parameters(
        arity = "1..*",
        paramLabel = "<reason>",
        description = "Why, recorded with the hold (words are joined with spaces).")
    List<String> reason;

    @Override
    int execute() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.put("reason", String.join(" ", reason));
      return print(api().post("api/throttle/hold", body), this::printThrottle);
    }
  }

  @Command(name = "release", description = "Take the brake off.")
  static final class Release extends Action {
    @Override
    int execute() {
      return print(api().post("api/throttle/release", null), this::printThrottle);
    }
  }

  @Command(
      name = "set",
      description = "Change a health check's threshold or resume level at runtime.")
  static final class SetCheck extends Action {
    @Parameters(index = "0", paramLabel = "<check>", description = "The check's name.")
    String check;

    @Option(names = "--threshold", paramLabel = "<number>", description = "The new threshold.")
    Double threshold;

    @Option(
        names = "--resume-below",
        paramLabel = "<number>",
        description = "Batches start again once the reading is below this.")
    Double resumeBelow;

    @Override
    int execute() {
      if (threshold == null && resumeBelow == null) {
        throw new ParameterException(
            spec.commandLine(), "give --threshold, --resume-below or both");
      }
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      if (threshold != null) {
        body.put("threshold", threshold);
      }
      if (resumeBelow != null) {
        body.put("resumeBelow", resumeBelow);
      }
      return print(
          api().patch("api/throttle/checks/" + ApiClient.segment(check), body),
          this::printThrottle);
    }
  }
}
