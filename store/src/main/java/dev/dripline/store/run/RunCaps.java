package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * A run's recorded cap and its definition's, what holds it and its held time, read under the run
 * row's lock ({@link RunStore#lockCaps}).
 *
 * @param maxParallelBatches the run's effective cap, as recorded
 * @param definitionCap the definition's cap, null if it has none (or is unknown)
 * @param holds why no batch of the run may start now, comma-separated ({@code brake}, check names);
 *     empty when nothing holds it
 * @param heldSince when the run's current hold began, as booked; null when none is open
 * @param throttledMillis time of the run's holds that ended
 */
@Introspected
public record RunCaps(
    int maxParallelBatches,
    @Nullable Integer definitionCap,
    @Nullable String holds,
    @Nullable Instant heldSince,
    long throttledMillis) {
  /** {@link #holds} as a list. */
  public List<String> holdList() {
    return holds == null || holds.isEmpty() ? List.of() : Arrays.asList(holds.split(","));
  }
}
