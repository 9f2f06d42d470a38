package dev.dripline.workflows.webhooks;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * Runs {@link WebhookActivities#deliver} with Temporal's retries: the wait between attempts starts
 * at the input's initial interval and doubles up to its cap, for as long as the input says (24 h by
 * default, {@code dripline.webhooks.retry-for}). Once that runs out the delivery is recorded as
 * failed and the workflow ends.
 */
public class WebhookDeliveryWorkflowImpl implements WebhookDeliveryWorkflow {
  private static final Logger log = Workflow.getLogger(WebhookDeliveryWorkflowImpl.class);

  private final WebhookActivities bookkeeping =
      Workflow.newActivityStub(
          WebhookActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofMinutes(1))
              .setSummary("record a webhook delivery's end")
              .build());

  @Override
  public void deliver(WebhookDelivery delivery) {
    WebhookActivities attempts =
        Workflow.newActivityStub(
            WebhookActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofMillis(delivery.attemptTimeoutMillis()))
                .setScheduleToCloseTimeout(Duration.ofMillis(delivery.retryForMillis()))
                .setSummary("post webhook delivery " + delivery.deliveryId())
                .setRetryOptions(
                    RetryOptions.newBuilder()
                        .setInitialInterval(Duration.ofMillis(delivery.initialIntervalMillis()))
                        .setBackoffCoefficient(2)
                        .setMaximumInterval(Duration.ofMillis(delivery.maxIntervalMillis()))
                        .build())
                .build());
    try {
      attempts.deliver(delivery.deliveryId());
    } catch (ActivityFailure failure) {
      log.warn("webhook delivery {} gave up: {}", delivery.deliveryId(), failure.getMessage());
      bookkeeping.recordGivenUp(delivery.deliveryId());
    }
  }
}
