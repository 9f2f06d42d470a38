package dev.dripline.app.ui;

import dev.dripline.app.run.RunDesk;
import dev.dripline.app.run.RunResponse;
import dev.dripline.app.ui.ThroughputChart.Bar;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.store.run.ProgressAtEdge;
import dev.dripline.store.run.ProgressSampleRepository;
import io.micronaut.core.annotation.Nullable;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The bars of a run's throughput chart over its whole life, from its progress samples ({@code
 * run_progress_samples}, written by the workers every {@code
 * dripline.engine.throughput-sample-interval}): the time from the start of the sampling interval in
 * which the run started to its end (or now) is cut into at most {@value ThroughputChart#BARS} bars
 * of whole sampling intervals, the last one ending at the run's end, and each bar's keys are the
 * difference of the run's processed keys at its two edges. An edge's figure is the run's latest
 * sample at or before it, read with one index probe per edge; the end's is the run's own counter.
 * The cost is the same for a run of ten batches or of a million.
 *
 * <p>A run too young for {@value #MIN_BARS} bars, or without a sample in its span (it has just
 * started, or it ran before samples were taken), gets the chart of its last completed batches
 * instead ({@link ThroughputChart#ofCompletions}).
 */
@Singleton
public class RunThroughput {
  /** Fewest bars a chart from samples has. */
  static final int MIN_BARS = 10;

  /** Completed batches the chart of a run without samples reads at most. */
  static final int CHART_BATCHES = 2000;

  private final RunDesk runs;
  private final Duration interval;
  private final Clock clock;

  @Inject
  public RunThroughput(RunDesk runs, EngineConfig engine) {
    this(runs, engine.throughputSampleInterval(), Clock.systemUTC());
  }

  RunThroughput(RunDesk runs, Duration interval, Clock clock) {
    this.runs = runs;
    this.interval = interval;
    this.clock = clock;
  }

  /** The chart's bars of {@code run}; none if nothing has completed yet. */
  List<Bar> bars(RunResponse run) {
    List<Bar> sampled = List.of();
    if (run.startedAt() != null) {
      boolean ended =
          run.finishedAt() != null
              && (run.status().equals("completed")
                  || run.status().equals("failed")
                  || run.status().equals("stopped"));
      Instant end = ended ? run.finishedAt() : clock.instant();
      sampled = sampled(run.id(), run.startedAt(), end, run.progress().processedKeys());
    }
    return sampled.isEmpty()
        ? ThroughputChart.ofCompletions(runs.recentCompletions(run.id(), CHART_BATCHES))
        : sampled;
  }

  /**
   * The bars of run {@code runId}, started at {@code startedAt}, up to {@code end}, when it had
   * processed {@code processedKeys}; none if too young or without samples.
   */
  List<Bar> sampled(long runId, Instant startedAt, Instant end, long processedKeys) {
    Axis axis = Axis.of(startedAt, end, interval);
    if (axis == null || axis.edges() < MIN_BARS) {
      return List.of();
    }
    return axis.bars(
        runs.progressAtEdges(runId, axis.first(), axis.stepMillis(), axis.edges()), processedKeys);
  }

  /**
   * A chart's time axis: {@code edges} edges {@code first + k * stepMillis}, then {@code end}.
   *
   * @param first the start of the sampling interval that holds the run's start
   * @param stepMillis the bars' length, whole sampling intervals
   * @param edges the edges before the end, one per bar
   * @param end the run's end, or now
   */
  record Axis(Instant first, long stepMillis, int edges, Instant end) {
    /** The axis from the run's start to {@code end}; null if {@code end} is not later. */
    static @Nullable Axis of(Instant startedAt, Instant end, Duration interval) {
      long intervalMillis = Math.max(1, interval.toMillis());
      Instant first = ProgressSampleRepository.intervalStart(startedAt, interval);
      long span = end.toEpochMilli() - first.toEpochMilli();
      if (span <= 0) {
        return null;
      }
      long step =
          Math.max(1, ceilDiv(span, ThroughputChart.BARS * intervalMillis)) * intervalMillis;
      return new Axis(first, step, (int) ceilDiv(span, step), end);
    }

    /**
     * The bars from the run's progress at each edge ({@code atEdges}) and at the end ({@code
     * processedKeys}). Nothing was processed before the run's first interval; an edge before the
     * run's first sample otherwise has no figure, and the bars it bounds are left out. A last bar
     * shorter than half a step is drawn together with the one before. None without any sample.
     */
    List<Bar> bars(List<ProgressAtEdge> atEdges, long processedKeys) {
      Long[] keys = new Long[edges + 1];
      boolean sampled = false;
      for (ProgressAtEdge at : atEdges) {
        keys[at.edge()] = at.processedKeys();
        sampled |= at.processedKeys() != null;
      }
      if (!sampled) {
        return List.of();
      }
      if (keys[0] == null) {
        keys[0] = 0L;
      }
      keys[edges] = processedKeys;
      List<Bar> bars = new ArrayList<>(edges);
      for (int k = 0; k < edges; k++) {
        Instant start = first.plusMillis(k * stepMillis);
        Instant stop = k == edges - 1 ? end : start.plusMillis(stepMillis);
        if (keys[k] == null || keys[k + 1] == null) {
          continue;
        }
        Bar bar = new Bar(start, stop, Math.max(0, keys[k + 1] - keys[k]));
        Bar before = bars.isEmpty() ? null : bars.get(bars.size() - 1);
        if (k == edges - 1
            && before != null
            && before.end().equals(start)
            && stop.toEpochMilli() - start.toEpochMilli() < stepMillis / 2) {
          bars.set(bars.size() - 1, new Bar(before.start(), stop, before.keys() + bar.keys()));
        } else {
          bars.add(bar);
        }
      }
      return bars;
    }

    private static long ceilDiv(long a, long b) {
      return -Math.floorDiv(-a, b);
    }
  }
}
