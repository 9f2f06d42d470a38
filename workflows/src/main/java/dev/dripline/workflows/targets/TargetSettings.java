package dev.dripline.workflows.targets;

/**
 * The engine's settings for targets, read by the worker from its configuration.
 *
 * @param backoffBaseMillis planner backoff base (default 30 s)
 * @param backoffCapMillis planner backoff cap (default 30 min)
 * @param capacityRetryMillis wait before trying again after losing a capacity race
 * @param pollMillis how often a backfilling or primed target looks at its run and live batches
 * @param liveBatchesPerDrain live batches applied per activity call
 * @param planHeartbeatMillis a planning call silent this long is presumed dead (its worker died)
 *     and tried again; 0 (a record from before this setting): {@link
 *     #DEFAULT_PLAN_HEARTBEAT_MILLIS}
 */
public record TargetSettings(
    long backoffBaseMillis,
    long backoffCapMillis,
    long capacityRetryMillis,
    long pollMillis,
    int liveBatchesPerDrain,
    long planHeartbeatMillis) {

  /** The batches' default heartbeat timeout, which planning calls share. */
  public static final long DEFAULT_PLAN_HEARTBEAT_MILLIS = 30_000;

  /** Settings with the default heartbeat timeout of planning calls. */
  public TargetSettings(
      long backoffBaseMillis,
      long backoffCapMillis,
      long capacityRetryMillis,
      long pollMillis,
      int liveBatchesPerDrain) {
    this(
        backoffBaseMillis,
        backoffCapMillis,
        capacityRetryMillis,
        pollMillis,
        liveBatchesPerDrain,
        DEFAULT_PLAN_HEARTBEAT_MILLIS);
  }

  public PlannerBackoff backoff() {
    return new PlannerBackoff(backoffBaseMillis, backoffCapMillis);
  }

  /** The heartbeat timeout of a planning call, never 0. */
  public long effectivePlanHeartbeatMillis() {
    return planHeartbeatMillis > 0 ? planHeartbeatMillis : DEFAULT_PLAN_HEARTBEAT_MILLIS;
  }

  /** These settings with another heartbeat timeout for planning calls. */
  public TargetSettings withPlanHeartbeatMillis(long millis) {
    return new TargetSettings(
        backoffBaseMillis,
        backoffCapMillis,
        capacityRetryMillis,
        pollMillis,
        liveBatchesPerDrain,
        millis);
  }
}
