package dev.dripline.store.webhooks;

import java.util.List;

/** The webhook events (spec O3) and their message ids. */
public final class WebhookEvents {
  /** Every event type an endpoint may subscribe to; migration V38's triggers write them. */
  public static final List<String> TYPES =
      List.of(
          "run.started",
          "run.completed",
          "run.failed",
          "run.stopped",
          "target.failing",
          "target.primed",
          "throttle.held",
          "throttle.released");

  private WebhookEvents() {}

  /**
   * The {@code webhook-id} of event {@code eventId}: the same at every attempt of its delivery to
   * every endpoint, so a receiver drops a repeat.
   */
  public static String messageId(long eventId) {
    return "evt_" + eventId;
  }
}
