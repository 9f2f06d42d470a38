package dev.dripline.app;

import dev.dripline.config.TemporalConfig;
import dev.dripline.temporal.TemporalFactory;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Replaces;
import io.temporal.serviceclient.RpcRetryOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import jakarta.inject.Singleton;
import java.time.Duration;

/**
 * Test wiring: Temporal calls give up after about two seconds instead of the SDK's default minute
 * of retries, so the API's "Temporal unreachable" paths can be tested within the HTTP client's read
 * timeout.
 */
@Factory
public class FastFailingTemporal {

  @Singleton
  @Bean(preDestroy = "shutdown")
  @Replaces(bean = WorkflowServiceStubs.class, factory = TemporalFactory.class)
  WorkflowServiceStubs serviceStubs(TemporalConfig config) {
    return WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder()
            .setTarget(config.address())
            .setRpcTimeout(Duration.ofSeconds(2))
            .setRpcRetryOptions(
                RpcRetryOptions.newBuilder()
                    .setExpiration(Duration.ofSeconds(2))
                    .validateBuildWithDefaults())
            .build());
  }
}
