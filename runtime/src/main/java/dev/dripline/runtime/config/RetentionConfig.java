package dev.dripline.runtime.config;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * Retention and the purge (spec D5, docs/operations.md "Retention and deletion").
 *
 * @param period how long the batches of an ended run, webhook events and their deliveries, and
 *     audit events are kept, {@code DRIPLINE_RETENTION}; also the least workflow-execution
 *     retention the worker expects of its Temporal namespace
 * @param chunkSize the most rows one delete statement (its own transaction) removes, {@code
 *     DRIPLINE_PURGE_CHUNK_SIZE}
 * @param interval how often the purge schedule starts the purge workflow, {@code
 *     DRIPLINE_PURGE_INTERVAL}; a run's deletion also starts it at once
 * @param schedule whether a worker creates (or updates) the purge schedule at start-up, {@code
 *     DRIPLINE_PURGE_SCHEDULE}
 */
@ConfigurationProperties("dripline.retention")
public record RetentionConfig(
    @Bindable(defaultValue = "30d") Duration period,
    @Bindable(defaultValue = "5000") int chunkSize,
    @Bindable(defaultValue = "1h") Duration interval,
    @Bindable(defaultValue = "true") boolean schedule) {}
