package dev.dripline.workflows.run;

/**
 * How the engine runs one batch: timeouts and bounded retries with exponential backoff.
 *
 * @param startToCloseMillis longest one attempt may take
 * @param heartbeatMillis an attempt that does not heartbeat this long is presumed dead
 * @param maxAttempts attempts before the batch is failed, at least 1
 * @param initialIntervalMillis delay before the second attempt
 * @param maxIntervalMillis cap on the delay between attempts
 */
public record BatchPolicy(
    long startToCloseMillis,
    long heartbeatMillis,
    int maxAttempts,
    long initialIntervalMillis,
    long maxIntervalMillis) {}
