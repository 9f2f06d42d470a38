package dev.dripline.workflows.run;

import java.time.Duration;
import java.time.Instant;

/**
 * Progress of a run, computed the same way by the workflow's {@code progress} query and by the HTTP
 * API so that both report the same figures (spec R11).
 *
 * @param totalKeys keys in scope, once planning has finished; {@code null} before
 * @param processedKeys sum of the sizes of completed batches
 * @param percent floor of processed / total, capped at 100; 100 once completed
 * @param throughputPerMinute processed keys per minute of elapsed time not spent held (P2: the
 *     brake or a health check kept batches from starting; that time is not processing time)
 * @param etaSeconds estimated seconds to completion while running, at that throughput, else {@code
 *     null}
 * @param elapsedSeconds seconds since the run started (until it finished), {@code null} before
 */
public record RunProgress(
    Long totalKeys,
    long processedKeys,
    int percent,
    double throughputPerMinute,
    Long etaSeconds,
    Long elapsedSeconds) {

  /**
   * Computes progress from the counters a run keeps; {@code now} closes an unfinished run's clock.
   */
  public static RunProgress of(
      RunStatus status,
      Long totalKeys,
      long processedKeys,
      Instant startedAt,
      Instant finishedAt,
      Instant now) {
    return of(status, totalKeys, processedKeys, startedAt, finishedAt, now, 0, null);
  }

  /**
   * Computes progress from the counters a run keeps, leaving out the time it was held: {@code
   * throttledMillis} of holds that ended and, while one lasts, the time since {@code heldSince}.
   */
  public static RunProgress of(
      RunStatus status,
      Long totalKeys,
      long processedKeys,
      Instant startedAt,
      Instant finishedAt,
      Instant now,
      long throttledMillis,
      Instant heldSince) {
    int percent;
    if (status == RunStatus.COMPLETED) {
      percent = 100;
    } else if (totalKeys == null) {
      percent = 0;
    } else if (totalKeys == 0) {
      percent = 100;
    } else {
      percent = (int) Math.min(100, processedKeys * 100 / totalKeys);
    }
    Long elapsed = null;
    double throughput = 0;
    Long eta = null;
    if (startedAt != null) {
      Instant end = finishedAt != null ? finishedAt : now;
      Duration span = Duration.between(startedAt, end);
      long millis = Math.max(0, span.toMillis());
      elapsed = millis / 1000;
      long held = Math.max(0, throttledMillis);
      if (heldSince != null && end.isAfter(heldSince)) {
        held += Duration.between(heldSince, end).toMillis();
      }
      long working = Math.max(0, millis - held);
      if (working > 0) {
        throughput = processedKeys * 60_000.0 / working;
      }
      if (status == RunStatus.RUNNING
          && totalKeys != null
          && throughput > 0
          && processedKeys < totalKeys) {
        eta = (long) Math.ceil((totalKeys - processedKeys) * 60.0 / throughput);
      } else if (status == RunStatus.RUNNING && totalKeys != null && processedKeys >= totalKeys) {
        eta = 0L;
      }
    }
    return new RunProgress(totalKeys, processedKeys, percent, throughput, eta, elapsed);
  }
}
