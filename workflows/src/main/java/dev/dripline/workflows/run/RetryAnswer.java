package dev.dripline.workflows.run;

/**
 * The run workflow's answer to a retry Update.
 *
 * @param requeued batches moved back to pending (when not refused)
 * @param refusal why nothing was done, or {@code null}; the API answers 409 with it
 * @param runGone the run no longer exists (the API answers 404)
 */
public record RetryAnswer(int requeued, String refusal, boolean runGone) {
  static RetryAnswer requeued(int requeued) {
    return new RetryAnswer(requeued, null, false);
  }

  static RetryAnswer refused(String refusal) {
    return new RetryAnswer(0, refusal, false);
  }

  static RetryAnswer gone() {
    return new RetryAnswer(0, null, true);
  }
}
