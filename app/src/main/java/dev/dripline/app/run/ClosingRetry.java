package dev.dripline.app.run;

import io.grpc.Status;
import java.util.function.Supplier;

/**
 * Retries a signal that Temporal refused because the workflow was closing: a run's workflow
 * continues as new (every few hundred batches, and while an ended run waits for a retry), and a
 * signal that reaches it in that instant is answered {@code RESOURCE_EXHAUSTED: workflow operation
 * can not be applied because workflow is closing} (temporalio/temporal#1289). The next execution
 * takes signals a moment later, so the request is sent again rather than answered 503.
 */
final class ClosingRetry {
  /** Pauses between tries, in milliseconds: about 3 s in all. */
  static final long[] PAUSES_MILLIS = {50, 100, 200, 400, 800, 1_600};

  private ClosingRetry() {}

  /** Runs {@code call}, again after a pause while it fails because the workflow was closing. */
  static <T> T call(Supplier<T> call) {
    for (int attempt = 0; ; attempt++) {
      try {
        return call.get();
      } catch (RuntimeException e) {
        if (attempt >= PAUSES_MILLIS.length || !isClosing(e)) {
          throw e;
        }
        try {
          Thread.sleep(PAUSES_MILLIS[attempt]);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /** Whether {@code e} is Temporal's refusal of an operation on a workflow that is closing. */
  static boolean isClosing(Throwable e) {
    Status status = Status.fromThrowable(e);
    return status.getCode() == Status.Code.RESOURCE_EXHAUSTED
        && String.valueOf(status.getDescription()).contains("workflow is closing");
  }
}
