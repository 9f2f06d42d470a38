package dev.dripline.workflows.dryrun;

import java.util.List;

/**
 * What a worker that hosts the definition planned for a {@link DryRunRequest}: the result of {@link
 * DryRunWorkflow}. Keys are as the API shows them ({@code dev.dripline.spi.KeyJson}: a number or a
 * string, an array of them for a key of several columns).
 *
 * @param error why planning failed (the run would fail planning), or {@code null}
 * @param totalKeys keys the run would plan, up to the request's bound
 * @param totalKeysExact false when counting stopped at the bound
 * @param batches batches those keys make
 * @param firstKey the first key, or {@code null} for an empty scope
 * @param lastKey the last key counted, or {@code null}
 * @param sampleBatches the first (at most five) batches
 */
public record DryRunAnswer(
    String error,
    long totalKeys,
    boolean totalKeysExact,
    long batches,
    Object firstKey,
    Object lastKey,
    List<SampleBatch> sampleBatches) {

  /**
   * One batch a dry run planned.
   *
   * @param startKey first key
   * @param endKey last key
   * @param size keys in it
   */
  public record SampleBatch(Object startKey, Object endKey, int size) {}

  /** A failed plan. */
  public static DryRunAnswer failed(String error) {
    return new DryRunAnswer(error, 0, true, 0, null, null, List.of());
  }
}
