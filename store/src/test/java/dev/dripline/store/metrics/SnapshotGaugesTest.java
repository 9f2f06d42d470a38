package dev.dripline.store.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micronaut.context.BeanProvider;
import org.junit.jupiter.api.Test;

/** What a process exports before it has read a snapshot (the database-backed cases: *IT). */
class SnapshotGaugesTest {
  /** A database that cannot be reached, as at a process's start during a PostgreSQL outage. */
  private static final BeanProvider<MetricSnapshotRepository> UNREACHABLE =
      () -> {
        throw new IllegalStateException("PostgreSQL is not reachable");
      };

  private static String driplineLines(PrometheusMeterRegistry registry) {
    return String.join(
        "\n", registry.scrape().lines().filter(l -> l.contains("dripline_")).toList());
  }

  @Test
  void aFreshProcessExportsNoSnapshotSeriesBeforeItsFirstRead() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SnapshotGauges gauges = new SnapshotGauges(UNREACHABLE);

    gauges.bindTo(registry);

    // Zeros here would say "no runs, nothing blocked, nothing stuck" — never read, so never said.
    assertThat(driplineLines(registry)).isEmpty();
  }

  @Test
  void aProcessThatCannotReadTheSnapshotKeepsExportingNothing() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SnapshotGauges gauges = new SnapshotGauges(UNREACHABLE);
    gauges.bindTo(registry);

    gauges.refresh();
    gauges.refresh();

    assertThat(driplineLines(registry)).isEmpty();
  }
}
