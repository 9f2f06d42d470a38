package dev.dripline.workflows.run;

import io.temporal.activity.LocalActivityOptions;
import io.temporal.common.RetryOptions;
import java.time.Duration;

/**
 * Options of the workflows' local activities: short PostgreSQL statements (claims, status changes,
 * counters), retried until the database answers (spec R12), with backoff from 500 ms to 30 s.
 *
 * <p>The attempts are bounded explicitly: the Java SDK retries a local activity only if its options
 * set a maximum of attempts or a schedule-to-close timeout (Temporal's "0 = unlimited" does not
 * hold for local activities). Without either, one statement that fails while PostgreSQL is down
 * fails the whole workflow execution ({@code
 * BackfillRunWorkflowTest#aClaimThatFailsWhilePostgresIsDownIsRetriedAndTheRunGoesOn}).
 */
public final class DatabaseLocalActivities {
  private DatabaseLocalActivities() {}

  public static LocalActivityOptions options() {
    return LocalActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(30))
        .setRetryOptions(
            RetryOptions.newBuilder()
                .setInitialInterval(Duration.ofMillis(500))
                .setBackoffCoefficient(2)
                .setMaximumInterval(Duration.ofSeconds(30))
                // At 30 s apart, effectively without end.
                .setMaximumAttempts(Integer.MAX_VALUE)
                .build())
        .build();
  }
}
