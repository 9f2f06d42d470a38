package dev.dripline.workflows.webhooks;

/**
 * One event's delivery to one endpoint, and how long it is retried. The message itself (url,
 * secret, body) is read by the activity from PostgreSQL, so no secret enters workflow history.
 *
 * @param deliveryId the row of {@code webhook_deliveries}
 * @param initialIntervalMillis the wait before the first retry; each next wait doubles
 * @param maxIntervalMillis the longest wait between two attempts (the backoff's cap)
 * @param retryForMillis how long after the first attempt retries stop and the delivery fails
 * @param attemptTimeoutMillis how long one attempt may take, the request included
 */
public record WebhookDelivery(
    long deliveryId,
    long initialIntervalMillis,
    long maxIntervalMillis,
    long retryForMillis,
    long attemptTimeoutMillis) {}
