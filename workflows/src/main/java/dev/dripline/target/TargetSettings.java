package dev.dripline.target;

/**
 * The engine's settings for targets, read by the worker from its configuration.
 *
 * @param backoffBaseMillis planner backoff base (default 30 s)
 * @param backoffCapMillis planner backoff cap (default 30 min)
 * @param capacityRetryMillis wait before trying again after losing a capacity race
 * @param pollMillis how often a backfilling or primed target looks at its run and live batches
 * @param liveBatchesPerDrain live batches applied per activity call
 */
public record TargetSettings(
    long backoffBaseMillis,
    long backoffCapMillis,
    long capacityRetryMillis,
    long pollMillis,
    int liveBatchesPerDrain) {

  public PlannerBackoff backoff() {
    return new PlannerBackoff(backoffBaseMillis, backoffCapMillis);
  }
}
