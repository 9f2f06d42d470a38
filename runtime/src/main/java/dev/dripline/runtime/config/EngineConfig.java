package dev.dripline.runtime.config;

import dev.dripline.workflows.run.BatchPolicy;
import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * Engine settings shared by app (validation of caps) and worker (running batches).
 *
 * @param safetyCap ceiling on the slots of one run, {@code DRIPLINE_ENGINE_SAFETY_CAP}; Temporal
 *     rejects more than 2,000 pending activities per workflow
 * @param batchMaxAttempts attempts of one batch before it is failed
 * @param batchTimeout longest one batch attempt may take
 * @param batchHeartbeatTimeout an attempt silent this long is presumed dead and retried
 * @param batchRetryInitialInterval delay before a batch's second attempt
 * @param batchRetryMaxInterval cap on the delay between attempts
 * @param planPageBatches batches planned per planning call (at least the cap is planned)
 * @param maxBatchesPerExecution batch activities one workflow execution starts before it continues
 *     as new
 * @param batchChainTime how long one batch activity may go on with further pending batches of its
 *     run in the same slot, without a round trip through Temporal per batch (0 turns chaining off)
 * @param batchChainPlanWait how long a chain that found no pending batch waits for the run's
 *     planning, still going on, to add one before it ends
 * @param databaseOutageWait how long a batch or planning attempt waits for PostgreSQL to answer
 *     again after it lost its connection, before the attempt fails (and counts) as usual
 * @param endedRunRetryWindow how long the workflow of a run that ended failed or stopped stays open
 *     for a {@code retry} signal (from the Temporal CLI or Web UI as from the API) before it
 *     completes; 0 closes it at once. After it, the API's retry still revives the run.
 * @param throughputSampleInterval how often the workers sample each running run's progress for the
 *     dashboard's throughput chart; also the shortest interval the chart draws from the samples
 * @param unknownBackfillWait how long a batch or planning task that reached workers which do not
 *     host its run's definition (a rolling deploy that adds it, workers hosting different
 *     definitions on one task queue) is retried, waiting for one that does, before it fails
 */
@ConfigurationProperties("dripline.engine")
public record EngineConfig(
    @Bindable(defaultValue = "200") int safetyCap,
    @Bindable(defaultValue = "3") int batchMaxAttempts,
    @Bindable(defaultValue = "1h") Duration batchTimeout,
    @Bindable(defaultValue = "30s") Duration batchHeartbeatTimeout,
    @Bindable(defaultValue = "1s") Duration batchRetryInitialInterval,
    @Bindable(defaultValue = "1m") Duration batchRetryMaxInterval,
    @Bindable(defaultValue = "100") int planPageBatches,
    @Bindable(defaultValue = "500") int maxBatchesPerExecution,
    @Bindable(defaultValue = "10s") Duration batchChainTime,
    @Bindable(defaultValue = "1s") Duration batchChainPlanWait,
    @Bindable(defaultValue = "10m") Duration databaseOutageWait,
    @Bindable(defaultValue = "7d") Duration endedRunRetryWindow,
    @Bindable(defaultValue = "10s") Duration throughputSampleInterval,
    @Bindable(defaultValue = "10m") Duration unknownBackfillWait) {

  public BatchPolicy batchPolicy() {
    return new BatchPolicy(
        batchTimeout.toMillis(),
        batchHeartbeatTimeout.toMillis(),
        batchMaxAttempts,
        batchRetryInitialInterval.toMillis(),
        batchRetryMaxInterval.toMillis());
  }
}
