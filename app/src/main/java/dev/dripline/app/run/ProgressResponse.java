package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.workflows.run.RunProgress;
import io.micronaut.serde.annotation.Serdeable;

/**
 * The API's view of {@link RunProgress}; the figures are computed by {@link RunProgress#of}, the
 * same code the workflow's {@code progress} query uses, so both report the same numbers.
 *
 * @param totalKeys keys in scope once planning is done, else {@code null}
 * @param processedKeys sum of completed batch sizes
 * @param percent floor of processed / total, capped at 100
 * @param throughputPerMinute processed keys per minute of elapsed time
 * @param etaSeconds estimated seconds left while running, else {@code null}
 * @param elapsedSeconds seconds since the run started, {@code null} before
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record ProgressResponse(
    Long totalKeys,
    long processedKeys,
    int percent,
    double throughputPerMinute,
    Long etaSeconds,
    Long elapsedSeconds) {

  static ProgressResponse of(RunProgress progress) {
    return new ProgressResponse(
        progress.totalKeys(),
        progress.processedKeys(),
        progress.percent(),
        progress.throughputPerMinute(),
        progress.etaSeconds(),
        progress.elapsedSeconds());
  }
}
