package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A chained batch's completion and the chain's next batch, from one statement ({@link
 * BatchRepository#completeAndClaimNext}).
 *
 * @param backfill the run's definition
 * @param slotSeconds seconds the completed batch held its slot (null if unknown)
 * @param number the next batch's number; null (and the rest of the next batch's columns) if the
 *     chain claimed none
 * @param startKey the next batch's first key
 * @param endKey the next batch's last key
 * @param size the next batch's keys
 * @param options the run's options, as JSON text
 * @param pool the run's pool, null if it draws from none
 */
@Introspected
public record ChainStep(
    String backfill,
    @Nullable Double slotSeconds,
    @Nullable Integer number,
    @Nullable Key startKey,
    @Nullable Key endKey,
    @Nullable Integer size,
    @Nullable String options,
    @Nullable String pool) {
  /** The next batch, or null if the chain claimed none. */
  public @Nullable BatchStart next() {
    return number == null ? null : new BatchStart(number, startKey, endKey, size, options, pool);
  }
}
