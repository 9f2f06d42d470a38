package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One line saying how far a run is, from {@code GET /api/runs/{id}}: status, a bar, percent,
 * processed and total keys, throughput per minute and ETA (or the time it took, once ended), and
 * what holds it while throttled, e.g. {@code run 7 running [#########---------------------] 30%
 * 60/200 keys 120.0/min ETA 1m10s}.
 */
final class ProgressLine {
  static final int BAR_WIDTH = 30;

  private ProgressLine() {}

  static String of(JsonNode run) {
    return "run "
        + run.path("id").asText()
        + " "
        + run.path("status").asText("?")
        + "  "
        + figures(run);
  }

  /** The line without the run's id and status: from the bar on. */
  static String figures(JsonNode run) {
    JsonNode progress = run.path("progress");
    String status = run.path("status").asText("?");
    int percent = progress.path("percent").asInt(0);
    List<String> parts = new ArrayList<>();
    parts.add(bar(percent, BAR_WIDTH));
    parts.add(String.format(Locale.ROOT, "%3d%%", percent));
    JsonNode total = progress.path("totalKeys");
    parts.add(
        Figures.count(progress.path("processedKeys").asLong())
            + "/"
            + (total.isNumber() ? Figures.count(total.asLong()) : "?")
            + " keys");
    parts.add(Figures.perMinute(progress.path("throughputPerMinute").asDouble()) + "/min");
    if (RunStatus.isTerminal(status)) {
      JsonNode elapsed = progress.path("elapsedSeconds");
      if (elapsed.isNumber()) {
        parts.add("took " + Figures.duration(elapsed.asLong()));
      }
    } else {
      JsonNode eta = progress.path("etaSeconds");
      parts.add("ETA " + (eta.isNumber() ? Figures.duration(eta.asLong()) : "?"));
    }
    String holds = holds(run.path("throttle"));
    if (holds != null) {
      parts.add("held by " + holds);
    }
    return String.join("  ", parts);
  }

  /** {@code [#####-----]}: {@code percent} of {@code width} filled, 0 to 100. */
  static String bar(int percent, int width) {
    int clamped = Math.max(0, Math.min(100, percent));
    int filled = clamped * width / 100;
    return "[" + "#".repeat(filled) + "-".repeat(width - filled) + "]";
  }

  /** What throttles the run, as {@code brake, replica-lag}; {@code null} if nothing does. */
  static String holds(JsonNode throttle) {
    if (!throttle.path("throttled").asBoolean(false)) {
      return null;
    }
    List<String> names = new ArrayList<>();
    for (JsonNode reason : throttle.path("reasons")) {
      names.add(reason.path("check").asText());
    }
    return names.isEmpty() ? "the throttle" : String.join(", ", names);
  }
}
