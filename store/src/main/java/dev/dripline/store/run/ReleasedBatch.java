package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A batch a failed chain held, put back to pending or failed ({@link
 * BatchRepository#releaseChainOfFailed}).
 *
 * @param number its number in the run
 * @param status {@code pending} or {@code failed}
 * @param backfill the run's definition
 * @param slotSeconds seconds it held its slot (null if unknown)
 */
@Introspected
public record ReleasedBatch(
    int number, String status, String backfill, @Nullable Double slotSeconds) {}
