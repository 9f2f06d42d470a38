package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * A row of the workflow's claim ({@link BatchRepository#claim}): a batch it claimed, or no batch
 * (number null), with what the claim found.
 *
 * @param number the batch's number; null in the row of a claim that took none
 * @param startKey first key of its range
 * @param endKey last key of its range
 * @param size keys in the range
 * @param slotsFull fewer batches were taken than asked because the run's slots are full
 * @param holds why no batch of the run may start now, comma-separated ({@code brake}, check names,
 *     {@code pool:<name>}); empty when nothing holds it
 * @param heldSince when the run's current hold began, as booked; null when none is open
 * @param throttledMillis time of the run's holds that ended
 */
@Introspected
public record ClaimRow(
    @Nullable Integer number,
    @Nullable Key startKey,
    @Nullable Key endKey,
    @Nullable Integer size,
    boolean slotsFull,
    @Nullable String holds,
    @Nullable Instant heldSince,
    long throttledMillis) {
  /** {@link #holds} as a list. */
  public List<String> holdList() {
    return holds == null || holds.isEmpty() ? List.of() : Arrays.asList(holds.split(","));
  }

  /** The batch of this row, null if it has none. */
  public @Nullable BatchRange batch() {
    return number == null ? null : new BatchRange(number, startKey, endKey, size);
  }
}
