package dev.dripline.worker;

import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Requires;
import io.temporal.client.WorkflowClient;
import io.temporal.worker.WorkerFactory;
import jakarta.inject.Singleton;

/**
 * Provides the {@link WorkerFactory} on core's {@link WorkflowClient}. Only exists where this
 * process hosts a worker; {@link DriplineWorker} starts and shuts it down.
 */
@Factory
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
public class TemporalWorkerFactory {

  @Singleton
  WorkerFactory workerFactory(WorkflowClient client) {
    return WorkerFactory.newInstance(client);
  }
}
