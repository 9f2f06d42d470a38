package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A batch outcome a compare-and-set recorded ({@link BatchRepository#complete}, {@link
 * BatchRepository#fail}).
 *
 * @param backfill the run's definition
 * @param slotSeconds seconds the batch held its slot, from the claim that enqueued it (or its first
 *     attempt); null if neither is known
 */
@Introspected
public record BatchDone(String backfill, @Nullable Double slotSeconds) {}
