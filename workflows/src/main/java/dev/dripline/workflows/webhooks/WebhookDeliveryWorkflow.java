package dev.dripline.workflows.webhooks;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/** Delivers one event to one endpoint, at least once (spec O3). */
@WorkflowInterface
public interface WebhookDeliveryWorkflow {
  @WorkflowMethod
  void deliver(WebhookDelivery delivery);
}
