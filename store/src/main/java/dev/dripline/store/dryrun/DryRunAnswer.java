package dev.dripline.store.dryrun;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * A worker's answer to a {@link DryRunRequest}, sent on {@link DryRunChannel#ANSWERS}. Keys are as
 * the API shows them ({@code dev.dripline.store.keys.KeyJson}).
 *
 * @param id the request's
 * @param error why planning failed (the run would fail planning), or {@code null}
 * @param totalKeys keys the run would plan, up to the request's bound
 * @param totalKeysExact false when counting stopped at the bound
 * @param batches batches those keys make
 * @param firstKey the first key, or {@code null} for an empty scope
 * @param lastKey the last key counted, or {@code null}
 * @param sampleBatches the first (at most five) batches
 */
@Serdeable
public record DryRunAnswer(
    String id,
    @Nullable String error,
    long totalKeys,
    boolean totalKeysExact,
    long batches,
    @Nullable Object firstKey,
    @Nullable Object lastKey,
    List<SampleBatch> sampleBatches) {

  /**
   * One batch a dry run planned.
   *
   * @param startKey first key
   * @param endKey last key
   * @param size keys in it
   */
  @Serdeable
  public record SampleBatch(Object startKey, Object endKey, int size) {}

  /** A failed plan. */
  public static DryRunAnswer failed(String id, String error) {
    return new DryRunAnswer(id, error, 0, true, 0, null, null, List.of());
  }
}
