package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;
import java.util.List;

/**
 * Whether a running run is held now (P2, P3), in {@code GET /api/runs/{id}}.
 *
 * @param throttled whether anything holds it: no new batch of it starts
 * @param since when the oldest of its current holds began, or {@code null} if not throttled
 * @param reasons what holds it, by name: the brake as check {@code brake} (value and threshold
 *     {@code null}), and each holding check that applies to its backfill
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record RunThrottleResponse(
    boolean throttled, @Nullable Instant since, List<Reason> reasons) {

  /**
   * One hold of a run.
   *
   * @param check {@code brake}, or the holding check's name
   * @param value the check's last reading, {@code null} if unknown or for the brake
   * @param threshold the threshold it was judged by, {@code null} for the brake
   */
  @Serdeable
  @JsonInclude(JsonInclude.Include.ALWAYS)
  public record Reason(String check, @Nullable Double value, @Nullable Double threshold) {}
}
