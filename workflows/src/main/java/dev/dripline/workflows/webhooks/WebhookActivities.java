package dev.dripline.workflows.webhooks;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Posts webhook deliveries (spec O3) and records their attempts. */
@ActivityInterface(namePrefix = "Webhook")
public interface WebhookActivities {
  /**
   * Posts delivery {@code deliveryId}, signed, and records the attempt on its row. Answers once the
   * endpoint acknowledged it (2xx), or when there is nothing to post (the endpoint was deleted, or
   * an earlier attempt delivered it); fails, retryably, otherwise.
   */
  @ActivityMethod
  void deliver(long deliveryId);

  /** Records that delivery {@code deliveryId}'s retries ran out. */
  @ActivityMethod
  void recordGivenUp(long deliveryId);
}
