package dev.dripline.workflows.run;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import java.time.Duration;

/**
 * The options of a run's activities, from its batch policy (R6): batches retried with backoff up to
 * the policy's attempts, a permanent failure not retried; planning calls retried likewise.
 *
 * @param batch a batch activity (and the batches it chains)
 * @param handoff a batch a chain handed off after its first attempt: one attempt fewer
 * @param planning a planning call
 */
record RunActivityOptions(
    ActivityOptions batch, ActivityOptions handoff, ActivityOptions planning) {

  static RunActivityOptions of(BatchPolicy policy, long chainMillis) {
    RetryOptions batchRetry =
        RetryOptions.newBuilder()
            .setInitialInterval(Duration.ofMillis(policy.initialIntervalMillis()))
            .setBackoffCoefficient(2)
            .setMaximumInterval(Duration.ofMillis(policy.maxIntervalMillis()))
            .setMaximumAttempts(policy.maxAttempts())
            .setDoNotRetry(
                DriplineFailure.BATCH_PERMANENT.name(), DriplineFailure.UNKNOWN_BACKFILL.name())
            .build();
    ActivityOptions batch =
        ActivityOptions.newBuilder()
            // A chain may start its last batch just before its chain time ends.
            .setStartToCloseTimeout(Duration.ofMillis(policy.startToCloseMillis() + chainMillis))
            .setHeartbeatTimeout(Duration.ofMillis(policy.heartbeatMillis()))
            .setRetryOptions(batchRetry)
            .build();
    ActivityOptions handoff =
        batch.toBuilder()
            .setRetryOptions(
                batchRetry.toBuilder()
                    .setMaximumAttempts(
                        policy.maxAttempts() > 1 ? policy.maxAttempts() - 1 : policy.maxAttempts())
                    .build())
            .build();
    ActivityOptions planning =
        ActivityOptions.newBuilder()
            .setStartToCloseTimeout(Duration.ofMinutes(10))
            // It heartbeats: a call on a killed worker is retried within seconds, not minutes.
            .setHeartbeatTimeout(Duration.ofMillis(policy.heartbeatMillis()))
            .setSummary("plan the next page of batches")
            .setRetryOptions(
                batchRetry.toBuilder()
                    .setDoNotRetry(
                        DriplineFailure.PLANNING_PERMANENT.name(),
                        DriplineFailure.UNKNOWN_BACKFILL.name())
                    .build())
            .build();
    return new RunActivityOptions(batch, handoff, planning);
  }
}
