package dev.dripline.workflows.dryrun;

/**
 * A dry run the app asks the workers to plan (K5 in docs/spec.md): a run's definition and validated
 * options, nothing saved. The input of {@link DryRunWorkflow} and {@link DryRunActivities}.
 *
 * @param backfill the definition
 * @param options its validated options, defaults applied, as canonical JSON
 * @param batchSize keys per batch
 * @param maxRecords the run's cap on keys, or {@code null}
 * @param bound counting stops after this many keys ({@code totalKeysExact: false})
 */
public record DryRunRequest(
    String backfill, String options, int batchSize, Long maxRecords, long bound) {}
