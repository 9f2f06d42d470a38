package dev.dripline.runtime.temporal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.collect.ImmutableMap;
import com.uber.m3.tally.RootScopeBuilder;
import com.uber.m3.tally.Scope;
import com.uber.m3.util.Duration;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.temporal.common.reporter.MicrometerClientStatsReporter;
import org.junit.jupiter.api.Test;

/**
 * The Temporal SDK tags the RPC metrics of an Update with {@code update_name}, which other calls of
 * the same metric lack (both carry the client scope's other keys, e.g. {@code signal_name=none});
 * Prometheus wants one set of tag keys per metric name, so without {@link TemporalMeterFilter} the
 * Update's samples (retries, cap changes) are dropped from /prometheus.
 */
class TemporalMeterFilterTest {

  @Test
  void anUpdatesRequestMetricsReachPrometheusBesideOtherCallsOfTheSameMetric() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config().meterFilter(new TemporalMeterFilter());
    Scope root =
        new RootScopeBuilder()
            .reporter(new MicrometerClientStatsReporter(registry))
            .reportEvery(Duration.ofSeconds(3600));

    root.tagged(ImmutableMap.of("operation", "GetWorkflowExecutionHistory", "signal_name", "none"))
        .counter("temporal_long_request")
        .inc(1);
    root.tagged(
            ImmutableMap.of(
                "operation",
                "UpdateWorkflowExecution",
                "signal_name",
                "none",
                "update_name",
                "retryBatches"))
        .counter("temporal_long_request")
        .inc(1);
    root.close();

    String scrape = registry.scrape();
    assertThat(scrape).contains("operation=\"GetWorkflowExecutionHistory\"");
    assertThat(scrape).contains("operation=\"UpdateWorkflowExecution\"");
    assertThat(scrape).contains("update_name=\"retryBatches\"");
    assertThat(scrape).contains("update_name=\"none\"");
  }
}
