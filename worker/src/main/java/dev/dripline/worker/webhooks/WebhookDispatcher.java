package dev.dripline.worker.webhooks;

import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.runtime.config.WebhookConfig;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.webhooks.UndispatchedDelivery;
import dev.dripline.store.webhooks.WebhookRepository;
import dev.dripline.workflows.webhooks.WebhookDelivery;
import dev.dripline.workflows.webhooks.WebhookDeliveryWorkflow;
import dev.dripline.workflows.webhooks.WebhookWorkflowIds;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.runtime.event.annotation.EventListener;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.client.WorkflowOptions;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a {@link WebhookDeliveryWorkflow} for every delivery row the events' triggers wrote (spec
 * O3), every {@code dripline.webhooks.dispatch-interval}, on a daemon thread of the worker process.
 * The rows are locked ({@code skip locked}: workers share the work) while their workflows are
 * started, and marked dispatched in the same transaction. A worker that dies in between leaves the
 * rows undispatched and the next pass starts them again: the workflow id is derived from the event
 * and the endpoint, and a duplicate start is refused by Temporal, so each delivery has one
 * workflow. Nothing is lost: the row was committed with the status change it reports.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
public class WebhookDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookDispatcher.class);

  /** Deliveries started per transaction. */
  static final int PAGE = 100;

  private final WebhookRepository webhooks;
  private final DataTransactions transactions;
  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final WebhookConfig config;
  private ScheduledExecutorService executor;
  private boolean failing;

  public WebhookDispatcher(
      WebhookRepository webhooks,
      DataTransactions transactions,
      WorkflowClient client,
      TemporalConfig temporal,
      WebhookConfig config) {
    this.webhooks = webhooks;
    this.transactions = transactions;
    this.client = client;
    this.temporal = temporal;
    this.config = config;
  }

  @EventListener
  void onStartup(StartupEvent event) {
    executor =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "dripline-webhooks");
              thread.setDaemon(true);
              return thread;
            });
    long interval = config.dispatchInterval().toMillis();
    var unused =
        executor.scheduleWithFixedDelay(this::pass, interval, interval, TimeUnit.MILLISECONDS);
  }

  private void pass() {
    try {
      while (dispatchPage() == PAGE) {
        // A full page: there may be more.
      }
      if (failing) {
        failing = false;
        LOG.info("Webhook deliveries dispatched again");
      }
    } catch (RuntimeException e) {
      // PostgreSQL or Temporal unreachable: the rows stay undispatched; the next pass tries again.
      // Said once per outage, not once per pass.
      if (!failing) {
        failing = true;
        LOG.warn("Webhook deliveries not dispatched, retrying every pass: {}", e.toString());
      }
    }
  }

  /**
   * Starts the workflows of up to {@link #PAGE} undispatched deliveries and marks them dispatched.
   *
   * @return the number of deliveries dispatched
   */
  public int dispatchPage() {
    return transactions.inTransaction(
        connection -> {
          List<UndispatchedDelivery> page = webhooks.lockUndispatched(PAGE);
          for (UndispatchedDelivery delivery : page) {
            start(delivery);
          }
          if (!page.isEmpty()) {
            webhooks.markDispatched(
                page.stream().map(UndispatchedDelivery::id).toArray(Long[]::new));
          }
          return page.size();
        });
  }

  private void start(UndispatchedDelivery delivery) {
    WebhookDeliveryWorkflow workflow =
        client.newWorkflowStub(
            WebhookDeliveryWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(
                    WebhookWorkflowIds.delivery(
                        temporal.taskQueue(), delivery.eventId(), delivery.endpointId()))
                .setTaskQueue(temporal.taskQueue())
                .setWorkflowIdReusePolicy(
                    WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
                .build());
    try {
      WorkflowClient.start(workflow::deliver, input(delivery.id()));
    } catch (WorkflowExecutionAlreadyStarted e) {
      // Started by an earlier pass that did not get to mark the row: one workflow per delivery.
    }
  }

  private WebhookDelivery input(long deliveryId) {
    return new WebhookDelivery(
        deliveryId,
        config.retryInitialInterval().toMillis(),
        config.retryMaxInterval().toMillis(),
        config.retryFor().toMillis(),
        // One attempt: the request and the recording of its outcome.
        config.requestTimeout().toMillis() + 30_000);
  }

  @PreDestroy
  void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }
}
