package dev.dripline.workflows.webhooks;

/** Workflow ids of webhook deliveries. */
public final class WebhookWorkflowIds {
  private WebhookWorkflowIds() {}

  /**
   * The id of the delivery of event {@code eventId} to endpoint {@code endpointId} on {@code
   * taskQueue}: one workflow per pair, so a delivery dispatched twice (a dispatcher that died
   * before it marked the row) is started once.
   */
  public static String delivery(String taskQueue, long eventId, long endpointId) {
    return taskQueue + "-webhook-" + eventId + "-" + endpointId;
  }
}
