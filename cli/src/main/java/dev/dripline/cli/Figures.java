package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;

/** How the CLI writes the API's numbers and durations for people. */
final class Figures {
  private Figures() {}

  /** {@code 1234567} as {@code 1,234,567}. */
  static String count(long value) {
    return String.format(Locale.ROOT, "%,d", value);
  }

  /** A rate per minute: one decimal below 100 ({@code 12.5}), whole above ({@code 1,234}). */
  static String perMinute(double value) {
    if (value < 100) {
      return String.format(Locale.ROOT, "%.1f", value);
    }
    return String.format(Locale.ROOT, "%,d", Math.round(value));
  }

  /** Seconds as {@code 45s}, {@code 4m05s}, {@code 2h03m} or {@code 3d04h}. */
  static String duration(long seconds) {
    if (seconds < 60) {
      return seconds + "s";
    }
    if (seconds < 3_600) {
      return String.format(Locale.ROOT, "%dm%02ds", seconds / 60, seconds % 60);
    }
    if (seconds < 86_400) {
      return String.format(Locale.ROOT, "%dh%02dm", seconds / 3_600, seconds % 3_600 / 60);
    }
    return String.format(Locale.ROOT, "%dd%02dh", seconds / 86_400, seconds % 86_400 / 3_600);
  }

  /** A JSON value as a cell: {@code null} for a missing or null node, else its text. */
  static String text(JsonNode node) {
    if (node == null || node.isMissingNode() || node.isNull()) {
      return null;
    }
    return node.isValueNode() ? node.asText() : node.toString();
  }

  /** A JSON number as a count cell ({@code 1,234}), {@code null} when missing or null. */
  static String count(JsonNode node) {
    if (node == null || !node.isNumber()) {
      return null;
    }
    return node.isIntegralNumber() ? count(node.asLong()) : node.asText();
  }
}
