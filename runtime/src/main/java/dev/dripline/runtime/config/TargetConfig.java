package dev.dripline.runtime.config;

import dev.dripline.workflows.targets.TargetSettings;
import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * Settings of targets and of the metrics snapshot (spec §4, §5, §6.3).
 *
 * @param plannerBackoffBase delay after a target's first planning failure, {@code
 *     DRIPLINE_PLANNER_BACKOFF_BASE}
 * @param plannerBackoffCap longest delay between planning attempts, {@code
 *     DRIPLINE_PLANNER_BACKOFF_CAP}
 * @param globalMaxBackfills most targets backfilling at once, {@code DRIPLINE_GLOBAL_MAX_BACKFILLS}
 * @param groupMaxBackfills most targets of one group backfilling at once, {@code
 *     DRIPLINE_GROUP_MAX_BACKFILLS}
 * @param capacityRetry wait before a target that lost a capacity race tries again
 * @param pollInterval how often a backfilling or primed target looks at its run and live batches
 * @param liveBatchesPerDrain live batches applied per activity call
 * @param metricsInterval time between two snapshots of the PostgreSQL-derived gauges
 */
@ConfigurationProperties("dripline.targets")
public record TargetConfig(
    @Bindable(defaultValue = "30s") Duration plannerBackoffBase,
    @Bindable(defaultValue = "30m") Duration plannerBackoffCap,
    @Bindable(defaultValue = "5") int globalMaxBackfills,
    @Bindable(defaultValue = "3") int groupMaxBackfills,
    @Bindable(defaultValue = "10s") Duration capacityRetry,
    @Bindable(defaultValue = "5s") Duration pollInterval,
    @Bindable(defaultValue = "100") int liveBatchesPerDrain,
    @Bindable(defaultValue = "10s") Duration metricsInterval) {

  public TargetSettings settings() {
    return new TargetSettings(
        plannerBackoffBase.toMillis(),
        plannerBackoffCap.toMillis(),
        capacityRetry.toMillis(),
        pollInterval.toMillis(),
        liveBatchesPerDrain);
  }
}
