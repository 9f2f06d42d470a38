package dev.dripline.app.ui;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.ui.RunThroughput.Axis;
import dev.dripline.app.ui.ThroughputChart.Bar;
import dev.dripline.store.run.CompletionPoint;
import dev.dripline.store.run.ProgressAtEdge;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The throughput chart's time axis, bars and SVG, from samples and from completed batches. */
class ThroughputChartTest {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final Instant T0 = Instant.parse("2031-05-01T00:00:00Z");

  @Test
  void theAxisCutsTheRunsLifeIntoAtMostFortyBarsOfWholeIntervals() {
    Axis day = Axis.of(T0.plusSeconds(7), T0.plus(Duration.ofDays(1)), INTERVAL);
    Axis young = Axis.of(T0.plusSeconds(7), T0.plusSeconds(95), INTERVAL);
    Axis odd = Axis.of(T0, T0.plusSeconds(4_001), INTERVAL);

    assertThat(day).isEqualTo(new Axis(T0, 2_160_000, 40, T0.plus(Duration.ofDays(1))));
    assertThat(young.stepMillis()).isEqualTo(10_000);
    assertThat(young.edges()).isEqualTo(10);
    assertThat(odd.stepMillis()).isEqualTo(110_000);
    assertThat(odd.edges()).isEqualTo(37);
    assertThat(Axis.of(T0, T0, INTERVAL)).isNull();
  }

  @Test
  void eachBarIsTheDifferenceOfItsEdgesTheLastEndingAtTheRunsCounter() {
    Axis axis = new Axis(T0, 60_000, 3, T0.plusSeconds(180));

    List<Bar> bars = axis.bars(edges(null, 100L, 400L), 700);

    assertThat(bars)
        .containsExactly(
            new Bar(T0, T0.plusSeconds(60), 100),
            new Bar(T0.plusSeconds(60), T0.plusSeconds(120), 300),
            new Bar(T0.plusSeconds(120), T0.plusSeconds(180), 300));
    assertThat(bars.get(1).perMinute()).isEqualTo(300.0);
  }

  @Test
  void barsBeforeTheFirstSampleAreLeftOutAndNoSampleMeansNoBars() {
    Axis axis = new Axis(T0, 60_000, 4, T0.plusSeconds(240));

    assertThat(axis.bars(edges(null, null, 500L, 600L), 900))
        .containsExactly(
            new Bar(T0.plusSeconds(120), T0.plusSeconds(180), 100),
            new Bar(T0.plusSeconds(180), T0.plusSeconds(240), 300));
    assertThat(axis.bars(edges(null, null, null, null), 900)).isEmpty();
  }

  @Test
  void aLastBarShorterThanHalfAStepJoinsTheOneBefore() {
    Axis axis = new Axis(T0, 60_000, 3, T0.plusSeconds(125));

    assertThat(axis.bars(edges(0L, 60L, 120L), 130))
        .containsExactly(
            new Bar(T0, T0.plusSeconds(60), 60),
            new Bar(T0.plusSeconds(60), T0.plusSeconds(125), 70));
  }

  @Test
  void theSvgPlacesEachBarAtItsTimeAndScalesToTheHighestRate() {
    List<Bar> bars =
        List.of(
            new Bar(T0, T0.plusSeconds(60), 60),
            new Bar(T0.plusSeconds(60), T0.plusSeconds(120), 120),
            new Bar(T0.plusSeconds(180), T0.plusSeconds(240), 30));

    String svg = ThroughputChart.svg(bars);

    assertThat(svg).startsWith("<svg").endsWith("</svg>").doesNotContain("NaN");
    assertThat(svg).contains(">120/min</text>", "<title>60.0/min, 2031-05-01 00:00:00 UTC</title>");
    assertThat(svg).contains("2031-05-01 00:04:00 UTC");
    List<Double> xs = new ArrayList<>();
    Matcher rect = Pattern.compile("<rect x=\"([0-9.]+)\"").matcher(svg);
    while (rect.find()) {
      xs.add(Double.parseDouble(rect.group(1)));
    }
    // A plot of 648 units over 240 s: bars at 0, 60 and 180 s.
    assertThat(xs).containsExactly(65.0, 227.0, 551.0);
    assertThat(ThroughputChart.svg(List.of())).isEmpty();
  }

  @Test
  void completedBatchesAreSummedPerIntervalOfTheirCompletionTimes() {
    List<CompletionPoint> points =
        List.of(
            new CompletionPoint(T0, 10),
            new CompletionPoint(T0.plusMillis(500), 10),
            new CompletionPoint(T0.plusMillis(79_999), 20));

    List<Bar> bars = ThroughputChart.ofCompletions(points);

    assertThat(bars).hasSize(40);
    assertThat(bars.get(0)).isEqualTo(new Bar(T0, T0.plusSeconds(2), 20));
    assertThat(bars.get(39).keys()).isEqualTo(20);
    assertThat(bars.stream().mapToLong(Bar::keys).sum()).isEqualTo(40);
    assertThat(ThroughputChart.ofCompletions(List.of())).isEmpty();
  }

  private static List<ProgressAtEdge> edges(Long... keys) {
    List<ProgressAtEdge> edges = new ArrayList<>();
    for (int i = 0; i < keys.length; i++) {
      edges.add(new ProgressAtEdge(i, keys[i], keys[i] == null ? null : keys[i] / 10));
    }
    return edges;
  }
}
