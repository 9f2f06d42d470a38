package dev.dripline.app;

import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.temporal.TemporalFactory;
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
 * timeout. The client's first call asks the server for its capabilities and, while Temporal is
 * unreachable, every call does and waits for that answer: one second here instead of the SDK's five
 * (which put ~5 s on each such test).
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
            .setSystemInfoTimeout(Duration.ofSeconds(1))
            .setRpcRetryOptions(
                RpcRetryOptions.newBuilder()
                    .setExpiration(Duration.ofSeconds(2))
                    .validateBuildWithDefaults())
            .build());
  }
}
