package dev.dripline.runtime.config;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;

/**
 * Where Dripline finds Temporal (spec §6.2).
 *
 * @param address the frontend, {@code TEMPORAL_ADDRESS}
 * @param namespace the namespace, {@code TEMPORAL_NAMESPACE}
 * @param taskQueue the task queue of runs and batches, {@code DRIPLINE_TASK_QUEUE}
 * @param rpcRetryExpiration how long a failing call to Temporal is retried before it fails
 * @param updateTimeout how long the API waits for a run's workflow to answer a retry or a cap
 *     change (a Temporal Update) before it answers 503; an Update a worker sees only later is
 *     rejected unapplied, {@code DRIPLINE_UPDATE_TIMEOUT}
 */
@ConfigurationProperties("dripline.temporal")
public record TemporalConfig(
    @Bindable(defaultValue = "localhost:7233") String address,
    @Bindable(defaultValue = "default") String namespace,
    @Bindable(defaultValue = "dripline") String taskQueue,
    @Bindable(defaultValue = "15s") java.time.Duration rpcRetryExpiration,
    @Bindable(defaultValue = "10s") java.time.Duration updateTimeout) {}
