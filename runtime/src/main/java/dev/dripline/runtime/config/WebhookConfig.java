package dev.dripline.runtime.config;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * Settings of webhook deliveries (spec O3, docs/configuration.md).
 *
 * @param retryFor how long a delivery is retried before it is recorded as failed, {@code
 *     DRIPLINE_WEBHOOK_RETRY_FOR}
 * @param retryInitialInterval the wait before a delivery's first retry; each next wait doubles,
 *     {@code DRIPLINE_WEBHOOK_RETRY_INITIAL_INTERVAL}
 * @param retryMaxInterval the longest wait between two attempts, {@code
 *     DRIPLINE_WEBHOOK_RETRY_MAX_INTERVAL}
 * @param requestTimeout how long one attempt waits for the endpoint's answer, {@code
 *     DRIPLINE_WEBHOOK_REQUEST_TIMEOUT}
 * @param dispatchInterval how often a worker looks for events whose deliveries are not started,
 *     {@code DRIPLINE_WEBHOOK_DISPATCH_INTERVAL}
 */
@ConfigurationProperties("dripline.webhooks")
public record WebhookConfig(
    @Bindable(defaultValue = "24h") Duration retryFor,
    @Bindable(defaultValue = "5s") Duration retryInitialInterval,
    @Bindable(defaultValue = "1h") Duration retryMaxInterval,
    @Bindable(defaultValue = "10s") Duration requestTimeout,
    @Bindable(defaultValue = "1s") Duration dispatchInterval) {}
