package dev.dripline.workflows.run;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import java.time.Duration;

/**
 * The options of a run's activities, from its batch policy (R6). Temporal retries them without
 * limit: the activities count the attempts that failed themselves and report the last one the
 * policy allows as non-retryable, with the policy's backoff as each retryable failure's next-retry
 * delay ({@link BatchPolicy}), so an attempt that died with its worker — a timeout, which no code
 * of ours reports — costs nothing but the wait. Temporal's own backoff, from the policy's initial
 * interval and capped at {@link BatchPolicy#LOST_ATTEMPT_MAX_INTERVAL}, spaces those out. A
 * permanent failure is not retried, nor {@link DriplineFailure#UNKNOWN_BACKFILL}, which an activity
 * reports only once its task has waited for a worker that hosts the run's definition: until then it
 * reports {@link DriplineFailure#DEFINITION_NOT_HOSTED}, retried like any other failure.
 *
 * @param batch a batch activity (and the batches it chains, or one a chain handed off)
 * @param planning a planning call
 */
record RunActivityOptions(ActivityOptions batch, ActivityOptions planning) {

  static RunActivityOptions of(BatchPolicy policy, long chainMillis) {
    RetryOptions batchRetry =
        RetryOptions.newBuilder()
            .setInitialInterval(Duration.ofMillis(Math.max(1, policy.initialIntervalMillis())))
            .setBackoffCoefficient(2)
            .setMaximumInterval(BatchPolicy.LOST_ATTEMPT_MAX_INTERVAL)
            .setMaximumAttempts(0)
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
    return new RunActivityOptions(batch, planning);
  }
}
