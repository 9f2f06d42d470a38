package dev.dripline.workflows.run;

import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.TemporalFailure;
import java.time.Instant;
import java.util.List;

/** Words the run workflow shows: its current details in the Web UI, and failures in its log. */
final class RunText {
  private RunText() {}

  /**
   * The workflow's current details (spec §6.2, "progress in words"), e.g. {@code running · 40 of
   * 400 keys (10%) · 2 of 2 slots in use}, with a planning error, what holds the run (the brake,
   * health checks: {@code throttled by replica-lag since …: no new batch starts}) and an ended
   * run's retry window.
   */
  static String details(
      RunStatus status,
      RunProgress progress,
      int held,
      int cap,
      String error,
      Long retryDeadlineMillis,
      List<String> holds,
      Long heldSinceMillis) {
    StringBuilder text = new StringBuilder(status.wire());
    text.append(" · ").append(progress.processedKeys());
    if (progress.totalKeys() != null) {
      text.append(" of ").append(progress.totalKeys());
    }
    text.append(" keys (").append(progress.percent()).append("%)");
    text.append(" · ").append(held).append(" of ").append(cap).append(" slots in use");
    if (error != null) {
      text.append(" · ").append(error);
    }
    if (holds != null && !holds.isEmpty() && status == RunStatus.RUNNING) {
      text.append(" · throttled by ").append(String.join(", ", holds));
      if (heldSinceMillis != null) {
        text.append(" since ").append(Instant.ofEpochMilli(heldSinceMillis));
      }
      text.append(": no new batch starts");
    }
    if (retryDeadlineMillis != null) {
      text.append(" · waits for a retry signal until ")
          .append(Instant.ofEpochMilli(retryDeadlineMillis));
    }
    return text.toString();
  }

  /** What an activity's failure says, without Temporal's wrapping. */
  static String failure(RuntimeException failure) {
    Throwable cause = failure;
    while (cause instanceof ActivityFailure && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof ApplicationFailure application) {
      return application.getOriginalMessage();
    }
    if (cause instanceof TemporalFailure temporal) {
      return temporal.getOriginalMessage();
    }
    return String.valueOf(cause.getMessage());
  }
}
