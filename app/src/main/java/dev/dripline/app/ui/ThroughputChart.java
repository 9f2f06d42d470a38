package dev.dripline.app.ui;

import dev.dripline.store.run.CompletionPoint;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * A run's recent throughput as an inline SVG bar chart, drawn from its last completed batches
 * ({@code RunDesk.recentCompletions}): their keys, summed per interval of their completion times,
 * as keys per minute. The intervals divide the span those batches cover into at most {@value
 * #BARS}, none shorter than a second. Only numbers and formatted times go into the SVG.
 */
final class ThroughputChart {
  static final int BARS = 40;
  private static final int WIDTH = 720;
  private static final int HEIGHT = 160;
  private static final int LEFT = 64;
  private static final int BOTTOM = 22;

  private ThroughputChart() {}

  /** The chart's SVG, or an empty string if no batch has completed. */
  static String svg(List<CompletionPoint> points) {
    if (points.isEmpty()) {
      return "";
    }
    Instant first = points.get(0).finishedAt();
    Instant last = first;
    for (CompletionPoint point : points) {
      if (point.finishedAt().isBefore(first)) {
        first = point.finishedAt();
      }
      if (point.finishedAt().isAfter(last)) {
        last = point.finishedAt();
      }
    }
    long spanMillis = Math.max(1, last.toEpochMilli() - first.toEpochMilli() + 1);
    long bucketMillis = Math.max(1000, (spanMillis + BARS - 1) / BARS);
    int bars = (int) Math.min(BARS, (spanMillis + bucketMillis - 1) / bucketMillis);
    long[] keys = new long[bars];
    for (CompletionPoint point : points) {
      int index = (int) ((point.finishedAt().toEpochMilli() - first.toEpochMilli()) / bucketMillis);
      keys[Math.min(bars - 1, index)] += point.size();
    }
    double[] perMinute = new double[bars];
    double max = 0;
    for (int i = 0; i < bars; i++) {
      perMinute[i] = keys[i] * 60_000.0 / bucketMillis;
      max = Math.max(max, perMinute[i]);
    }
    double plotWidth = WIDTH - LEFT - 8;
    double plotHeight = HEIGHT - BOTTOM - 10;
    double barWidth = plotWidth / bars;
    UiFormat fmt = UiFormat.INSTANCE;
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            Locale.ROOT,
            "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"keys per minute"
                + " over time\">",
            WIDTH,
            HEIGHT));
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x=\"4\" y=\"16\" class=\"axis\">%s/min</text>"
                + "<text x=\"4\" y=\"%d\" class=\"axis\">0</text>",
            fmt.rate(max),
            HEIGHT - BOTTOM));
    svg.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"base\"/>",
            LEFT,
            HEIGHT - BOTTOM,
            WIDTH - 8,
            HEIGHT - BOTTOM));
    for (int i = 0; i < bars; i++) {
      double h = max == 0 ? 0 : perMinute[i] / max * plotHeight;
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"col\">"
                  + "<title>%s/min</title></rect>",
              LEFT + i * barWidth + 1,
              HEIGHT - BOTTOM - h,
              Math.max(1, barWidth - 2),
              h,
              fmt.rate(perMinute[i])));
    }
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" class=\"axis\">%s</text>"
                + "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"end\">%s</text>",
            LEFT,
            HEIGHT - 4,
            fmt.time(first),
            WIDTH - 8,
            HEIGHT - 4,
            fmt.time(last)));
    svg.append("</svg>");
    return svg.toString();
  }
}
