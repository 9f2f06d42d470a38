package dev.dripline.activities.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.TargetFixtures;
import dev.dripline.store.metrics.MetricSnapshotRepository;
import dev.dripline.store.metrics.SnapshotGauges;
import dev.dripline.store.metrics.SnapshotSeries;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micronaut.context.BeanProvider;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gauges a process serves from the snapshot in PostgreSQL, and the snapshot's age. Each test
 * builds its own "process" (a {@link SnapshotGauges} on a registry of its own) with a monotonic
 * clock the test moves, so the age is exact: the test reads the snapshot's age on PostgreSQL's
 * clock before and after the process reads it, and the process's figure lies between the two.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class SnapshotGaugesIT {
  private static final String AGE = SnapshotSeries.METRICS_SNAPSHOT_AGE_SECONDS;

  @Inject MetricsActivitiesImpl metrics;
  @Inject MetricSnapshotRepository snapshots;
  @Inject TargetFixtures fixtures;

  @AfterEach
  void freshSnapshot() {
    metrics.snapshot();
  }

  /** A process with its own registry and a monotonic clock the test moves. */
  private static final class GaugeProcess {
    final AtomicLong nanos;
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final SnapshotGauges gauges;

    GaugeProcess(BeanProvider<MetricSnapshotRepository> snapshots, long clockOrigin) {
      nanos = new AtomicLong(clockOrigin);
      gauges = new SnapshotGauges(snapshots, nanos::get);
      gauges.bindTo(registry);
    }

    void advance(long seconds) {
      nanos.addAndGet(TimeUnit.SECONDS.toNanos(seconds));
    }

    /** A sample's value in Prometheus's text format ({@code +Inf} is not Java's). */
    private static double parse(String value) {
      return switch (value) {
        case "+Inf" -> Double.POSITIVE_INFINITY;
        case "-Inf" -> Double.NEGATIVE_INFINITY;
        default -> Double.parseDouble(value);
      };
    }

    /** The value of one series in this process's scrape, or null without one. */
    Double sample(String series) {
      return registry
          .scrape()
          .lines()
          .filter(l -> l.startsWith(series + " "))
          .map(l -> parse(l.substring(l.indexOf(' ') + 1)))
          .findFirst()
          .orElse(null);
    }
  }

  private BeanProvider<MetricSnapshotRepository> reachable() {
    return () -> snapshots;
  }

  /** The age of the stored snapshot on PostgreSQL's clock, in seconds. */
  private double databaseAge() {
    return (Double)
        fixtures
            .row(
                "select extract(epoch from now() - max(computed_at))::float8 as age"
                    + " from metric_snapshots")
            .get("age");
  }

  /** As if the metrics workflow had stopped snapshotting an hour ago. */
  private void snapshotAnHourOld() {
    metrics.snapshot();
    fixtures.update("update metric_snapshots set computed_at = computed_at - interval '1 hour'");
  }

  @Test
  void exportsTheAgeOfTheSnapshotItReadMeasuredOnTheDatabaseClock() {
    snapshotAnHourOld();
    GaugeProcess process = new GaugeProcess(reachable(), 0);
    double before = databaseAge();

    process.gauges.refresh();

    double after = databaseAge();
    assertThat(process.sample(AGE)).isBetween(before, after).isGreaterThanOrEqualTo(3600);
    assertThat(process.registry.scrape())
        .contains("# TYPE " + AGE + " gauge")
        .contains("# HELP " + AGE + " ");
  }

  @Test
  void theAgeKeepsGrowingWhileTheProcessCannotReadAgain() {
    snapshotAnHourOld();
    AtomicBoolean reachable = new AtomicBoolean(true);
    GaugeProcess process =
        new GaugeProcess(
            () -> {
              if (!reachable.get()) {
                throw new IllegalStateException("PostgreSQL is not reachable");
              }
              return snapshots;
            },
            42);
    double before = databaseAge();
    process.gauges.refresh();
    double after = databaseAge();
    Double stuck = process.sample("dripline_stuck_targets");

    reachable.set(false);
    process.advance(90);
    process.gauges.refresh();

    assertThat(process.sample(AGE)).isBetween(before + 90, after + 90);
    // It still serves the last snapshot it read: that is what has aged.
    assertThat(stuck).isNotNull();
    assertThat(process.sample("dripline_stuck_targets")).isEqualTo(stuck);
  }

  @Test
  void twoProcessesServeTheSameAgeWhateverTheirClocks() {
    snapshotAnHourOld();
    GaugeProcess one = new GaugeProcess(reachable(), 0);
    GaugeProcess other = new GaugeProcess(reachable(), 7_000_000_000_000_000L);
    double before = databaseAge();

    one.gauges.refresh();
    other.gauges.refresh();

    double after = databaseAge();
    assertThat(one.sample(AGE)).isBetween(before, after);
    assertThat(other.sample(AGE)).isBetween(before, after);
  }

  @Test
  void aTableWithoutASnapshotIsInfinitelyOldAndExportsNoFigures() {
    fixtures.update("delete from metric_snapshots");
    GaugeProcess process = new GaugeProcess(reachable(), 0);

    process.gauges.refresh();

    assertThat(process.sample(AGE)).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(process.sample("dripline_stuck_targets")).isNull();
    assertThat(process.sample("dripline_planning_failures_total")).isNull();
  }

  @Test
  void theSnapshotsSeriesAppearWithTheFirstRead() {
    metrics.snapshot();
    GaugeProcess process = new GaugeProcess(reachable(), 0);
    assertThat(process.sample("dripline_stuck_targets")).isNull();
    assertThat(process.sample(AGE)).isNull();

    process.gauges.refresh();

    for (String status : SnapshotSeries.RUN_STATUSES) {
      assertThat(process.registry.scrape()).contains("dripline_runs{status=\"" + status + "\"} ");
    }
    assertThat(process.sample("dripline_stuck_targets")).isNotNull();
    assertThat(process.sample("dripline_planning_failures_total")).isNotNull();
    assertThat(process.sample(AGE)).isNotNull();
  }
}
