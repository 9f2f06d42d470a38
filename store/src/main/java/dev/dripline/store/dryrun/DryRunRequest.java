package dev.dripline.store.dryrun;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;

/**
 * A dry run the app asks a worker to plan (K5 in docs/spec.md), sent on {@link
 * DryRunChannel#REQUESTS}: a run's definition and validated options, nothing saved.
 *
 * @param id chosen by the app; the answer carries it back
 * @param backfill the definition
 * @param options its validated options, defaults applied, as canonical JSON
 * @param batchSize keys per batch
 * @param maxRecords the run's cap on keys, or {@code null}
 * @param bound counting stops after this many keys ({@code totalKeysExact: false})
 */
@Serdeable
public record DryRunRequest(
    String id,
    String backfill,
    String options,
    int batchSize,
    @Nullable Long maxRecords,
    long bound) {}
