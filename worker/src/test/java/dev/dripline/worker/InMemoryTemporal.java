package dev.dripline.worker;

import dev.dripline.runtime.temporal.TemporalFactory;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.annotation.Requires;
import io.temporal.client.WorkflowClient;
import io.temporal.testing.TestWorkflowEnvironment;
import jakarta.inject.Singleton;

/**
 * Swaps core's client for one on an in-memory Temporal, so a worker test never polls the shared dev
 * server's task queue.
 */
@Factory
@Requires(property = "test.in-memory-temporal", value = "true")
class InMemoryTemporal {
  static final TestWorkflowEnvironment ENVIRONMENT = TestWorkflowEnvironment.newInstance();

  @Singleton
  @Replaces(bean = WorkflowClient.class, factory = TemporalFactory.class)
  WorkflowClient workflowClient() {
    return ENVIRONMENT.getWorkflowClient();
  }
}
