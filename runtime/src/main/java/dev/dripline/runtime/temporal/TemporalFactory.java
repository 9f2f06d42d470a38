package dev.dripline.runtime.temporal;

import com.uber.m3.tally.RootScopeBuilder;
import com.uber.m3.tally.Scope;
import com.uber.m3.util.Duration;
import dev.dripline.runtime.config.TemporalConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.schedules.ScheduleClient;
import io.temporal.client.schedules.ScheduleClientOptions;
import io.temporal.common.reporter.MicrometerClientStatsReporter;
import io.temporal.serviceclient.RpcRetryOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import jakarta.inject.Singleton;

/** The one place Temporal's client is wired; its SDK metrics go to Dripline's registry. */
@Factory
public class TemporalFactory {

  @Singleton
  @Bean(preDestroy = "shutdown")
  WorkflowServiceStubs serviceStubs(TemporalConfig config, MeterRegistry registry) {
    Scope scope =
        new RootScopeBuilder()
            .reporter(new MicrometerClientStatsReporter(registry))
            .reportEvery(Duration.ofSeconds(10));
    // TLS, a client certificate, an API key: as configured; a setting that cannot be used fails
    // the start here, with the variable to fix.
    WorkflowServiceStubsOptions.Builder options =
        TemporalConnection.secure(WorkflowServiceStubsOptions.newBuilder(), config);
    // Lazy: the process starts even while Temporal is down; /health reports it.
    return WorkflowServiceStubs.newServiceStubs(
        options
            .setTarget(config.address())
            .setMetricsScope(scope)
            // The SDK's default retries a failing call for a minute; an API request should fail
            // (503) well before a client gives up on it.
            .setRpcRetryOptions(
                RpcRetryOptions.newBuilder()
                    .setExpiration(config.rpcRetryExpiration())
                    .validateBuildWithDefaults())
            .build());
  }

  /** Applied by Micronaut to every registry before the SDK registers its first meter. */
  @Singleton
  MeterFilter temporalUpdateNameTag() {
    return new TemporalMeterFilter();
  }

  @Singleton
  WorkflowClient workflowClient(WorkflowServiceStubs stubs, TemporalConfig config) {
    return WorkflowClient.newInstance(
        stubs, WorkflowClientOptions.newBuilder().setNamespace(config.namespace()).build());
  }

  /**
   * Temporal Schedules of the namespace (the purge schedule, {@code PurgeSchedule}), on the
   * workflow client's connection.
   */
  @Singleton
  ScheduleClient scheduleClient(WorkflowClient client, TemporalConfig config) {
    return ScheduleClient.newInstance(
        client.getWorkflowServiceStubs(),
        ScheduleClientOptions.newBuilder().setNamespace(config.namespace()).build());
  }
}
