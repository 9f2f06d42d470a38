package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * The answer to {@code POST /api/runs?dryRun=true} (K5 in docs/spec.md): what the run would plan.
 *
 * @param wouldCreate true: the request is valid and no identical run is active
 * @param totalKeys keys in scope, up to the bound
 * @param totalKeysExact false when counting stopped at the bound
 * @param batches batches those keys make
 * @param firstKey the first key, null for an empty scope
 * @param lastKey the last key counted
 * @param sampleBatches the first five batches
 * @param effectiveMaxParallelBatches the cap the run would have (R5)
 * @param startingBatchSize the size of the run's first batches, which the figures above are planned
 *     with: its batch size, within a tuned run's bounds (P4)
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record DryRunResponse(
    boolean wouldCreate,
    long totalKeys,
    boolean totalKeysExact,
    long batches,
    Object firstKey,
    Object lastKey,
    List<SampleBatch> sampleBatches,
    int effectiveMaxParallelBatches,
    int startingBatchSize) {

  /**
   * One batch the dry run planned.
   *
   * @param startKey first key
   * @param endKey last key
   * @param size keys in it
   */
  @Serdeable
  public record SampleBatch(Object startKey, Object endKey, int size) {
    static SampleBatch of(DryRunAnswer.SampleBatch batch) {
      return new SampleBatch(batch.startKey(), batch.endKey(), batch.size());
    }
  }

  /** The response to a dry run {@code answer}ed without error. */
  static DryRunResponse of(
      DryRunAnswer answer, int effectiveMaxParallelBatches, int startingBatchSize) {
    return new DryRunResponse(
        true,
        answer.totalKeys(),
        answer.totalKeysExact(),
        answer.batches(),
        answer.firstKey(),
        answer.lastKey(),
        answer.sampleBatches().stream().map(SampleBatch::of).toList(),
        effectiveMaxParallelBatches,
        startingBatchSize);
  }
}
