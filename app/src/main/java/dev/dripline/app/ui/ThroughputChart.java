package dev.dripline.app.ui;

import dev.dripline.store.run.CompletionPoint;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A run's throughput as an inline SVG bar chart: one bar per interval of time ({@link Bar}), its
 * height the keys processed in it per minute, its place and width its interval's on the time axis.
 * The bars come from the run's progress samples over its whole life ({@link RunThroughput}), or,
 * before it has any, from its last completed batches ({@link #ofCompletions}). Only numbers and
 * formatted times go into the SVG.
 */
final class ThroughputChart {
  static final int BARS = 40;
  private static final int WIDTH = 720;
  private static final int HEIGHT = 160;
  private static final int LEFT = 64;
  private static final int BOTTOM = 22;

  private ThroughputChart() {}

  /**
   * Keys processed between {@code start} and {@code end}.
   *
   * @param start the interval's start
   * @param end its end, after the start
   * @param keys keys processed in it
   */
  record Bar(Instant start, Instant end, long keys) {
    /** Keys per minute over the interval. */
    double perMinute() {
      return keys * 60_000.0 / Math.max(1, end.toEpochMilli() - start.toEpochMilli());
    }
  }

  /**
   * Bars of a run's last completed batches ({@code RunDesk.recentCompletions}): their keys, summed
   * per interval of their completion times. The intervals divide the span those batches cover into
   * at most {@value #BARS}, none shorter than a second. None if no batch has completed.
   */
  static List<Bar> ofCompletions(List<CompletionPoint> points) {
    if (points.isEmpty()) {
      return List.of();
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
    List<Bar> result = new ArrayList<>(bars);
    for (int i = 0; i < bars; i++) {
      Instant start = first.plusMillis(i * bucketMillis);
      result.add(new Bar(start, start.plusMillis(bucketMillis), keys[i]));
    }
    return result;
  }

  /**
   * The chart's SVG, or an empty string without bars. The time axis runs from the first bar's start
   * to the last bar's end, the bars in time order; a stretch no bar covers is drawn empty.
   */
  static String svg(List<Bar> bars) {
    if (bars.isEmpty()) {
      return "";
    }
    Instant from = bars.get(0).start();
    Instant to = bars.get(bars.size() - 1).end();
    double spanMillis = Math.max(1, to.toEpochMilli() - from.toEpochMilli());
    double max = 0;
    for (Bar bar : bars) {
      max = Math.max(max, bar.perMinute());
    }
    double plotWidth = WIDTH - LEFT - 8;
    double plotHeight = HEIGHT - BOTTOM - 10;
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
    for (Bar bar : bars) {
      double x = (bar.start().toEpochMilli() - from.toEpochMilli()) / spanMillis * plotWidth;
      double w = (bar.end().toEpochMilli() - bar.start().toEpochMilli()) / spanMillis * plotWidth;
      double h = max == 0 ? 0 : bar.perMinute() / max * plotHeight;
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"col\">"
                  + "<title>%s/min, %s</title></rect>",
              LEFT + x + 1,
              HEIGHT - BOTTOM - h,
              Math.max(1, w - 2),
              h,
              fmt.rate(bar.perMinute()),
              fmt.time(bar.start())));
    }
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" class=\"axis\">%s</text>"
                + "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"end\">%s</text>",
            LEFT,
            HEIGHT - 4,
            fmt.time(from),
            WIDTH - 8,
            HEIGHT - 4,
            fmt.time(to)));
    svg.append("</svg>");
    return svg.toString();
  }
}
