package dev.dripline.workflows.run;

/**
 * The run workflow's answer to a cap-change Update, given once the new cap is in the run's record.
 *
 * @param maxParallelBatches the run's requested cap now
 * @param effectiveCap the cap it runs with (R5)
 * @param refusal why nothing was changed, or {@code null}; the API answers 409 with it
 * @param runGone the run no longer exists (the API answers 404)
 */
public record CapAnswer(
    Integer maxParallelBatches, Integer effectiveCap, String refusal, boolean runGone) {
  static CapAnswer changed(int maxParallelBatches, int effectiveCap) {
    return new CapAnswer(maxParallelBatches, effectiveCap, null, false);
  }

  static CapAnswer refused(String refusal) {
    return new CapAnswer(null, null, refusal, false);
  }

  static CapAnswer gone() {
    return new CapAnswer(null, null, null, true);
  }
}
