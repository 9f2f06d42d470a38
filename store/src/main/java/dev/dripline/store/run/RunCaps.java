package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A run's recorded cap and its definition's, read under the run row's lock ({@link
 * RunStore#lockCaps}).
 *
 * @param maxParallelBatches the run's effective cap, as recorded
 * @param definitionCap the definition's cap, null if it has none (or is unknown)
 */
@Introspected
public record RunCaps(int maxParallelBatches, @Nullable Integer definitionCap) {}
