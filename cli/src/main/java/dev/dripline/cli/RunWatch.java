package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code dripline runs watch <id>}: polls {@code GET /api/runs/{id}} and shows its {@link
 * ProgressLine} until the run is completed, failed or stopped; exits 0 if it completed, 1 if not
 * (its error on stderr). An API that stops answering (unreachable, 5xx) is polled on for up to
 * {@code --outage} seconds, as while the app restarts. On a terminal the line is redrawn in place;
 * otherwise (a pipe, a log) a line is printed each time the run's status or processed keys change,
 * and with {@code --json} each such answer is printed as one line of JSON.
 */
@Command(
    name = "watch",
    description = {
      "Show a run's progress until it ends: a bar, percent, keys, throughput, ETA.",
      "Exits 0 if the run completed, 1 if it failed or was stopped."
    })
final class RunWatch extends ApiCommand {
  /** Erases from the cursor to the end of the line (ANSI). */
  private static final String ERASE_LINE = "\u001b[K";

  @Parameters(index = "0", paramLabel = "<id>", description = "The run's id.")
  long id;

  @Option(
      names = "--interval",
      paramLabel = "<seconds>",
      defaultValue = "2",
      description = "Seconds between polls (default ${DEFAULT-VALUE}).")
  double intervalSeconds;

  @Option(
      names = "--outage",
      paramLabel = "<seconds>",
      defaultValue = "60",
      description =
          "How long the API may stay unreachable or fail (5xx) before watch gives up with exit 5"
              + " (default ${DEFAULT-VALUE}); a restarting app is waited for.")
  long outageSeconds;

  @Override
  int execute() {
    if (!(intervalSeconds > 0) || intervalSeconds > 3_600) {
      throw new ParameterException(
          spec.commandLine(), "--interval must be above 0 and at most 3600 seconds");
    }
    if (outageSeconds < 0) {
      throw new ParameterException(spec.commandLine(), "--outage must be 0 or more seconds");
    }
    Duration interval = Duration.ofMillis(Math.max(1, Math.round(intervalSeconds * 1_000)));
    PrintWriter out = out();
    boolean redraw = cli().terminal() && !json();
    String lastChange = null;
    long failingSince = 0;
    boolean failing = false;
    while (true) {
      ApiReply reply;
      try {
        reply = api().get(RunsCommand.runPath(id));
      } catch (ApiFailure failure) {
        if (failure.exitCode() != ExitCode.SERVER) {
          throw failure;
        }
        long now = System.nanoTime();
        if (!failing) {
          failing = true;
          failingSince = now;
          if (redraw) {
            out.println();
            out.flush();
          }
          cli().err().println("dripline: " + failure.lines().get(0) + "; still watching");
          cli().err().flush();
        } else if (now - failingSince > Duration.ofSeconds(outageSeconds).toNanos()) {
          throw failure;
        }
        pause(interval);
        continue;
      }
      if (failing) {
        failing = false;
        cli().err().println("dripline: the API answers again");
        cli().err().flush();
      }
      JsonNode run = reply.json();
      String status = run.path("status").asText();
      String change = status + "/" + run.path("progress").path("processedKeys").asLong();
      if (redraw) {
        out.print("\r" + ProgressLine.of(run) + ERASE_LINE);
        out.flush();
      } else if (!change.equals(lastChange)) {
        out.println(json() ? run.toString() : ProgressLine.of(run));
        out.flush();
      }
      lastChange = change;
      if (RunStatus.isTerminal(status)) {
        if (redraw) {
          out.println();
        }
        return ended(run, status);
      }
      pause(interval);
    }
  }

  private static void pause(Duration interval) {
    try {
      Thread.sleep(interval.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiFailure(ExitCode.SERVER, "interrupted");
    }
  }

  private int ended(JsonNode run, String status) {
    if (RunStatus.COMPLETED.equals(status)) {
      return ExitCode.OK;
    }
    PrintWriter err = cli().err();
    String error = Figures.text(run.path("error"));
    err.println("dripline: run " + id + " " + status + (error == null ? "" : ": " + error));
    err.flush();
    return ExitCode.REFUSED;
  }
}
