package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Whether a running run is held now (P2, P3), in {@code GET /api/runs/{id}}.
 *
 * @param throttled whether anything holds it: no new batch of it starts
 * @param since when the oldest of its current holds began, or {@code null} if not throttled
 * @param reasons what holds it, by name: the brake as check {@code brake} (value and threshold
 *     {@code null}), each holding check that applies to its backfill, and its spent failure budget
 *     as {@code failure-budget} (value: the share of its finished batches that failed, threshold:
 *     its {@code maxFailedBatchesPercent})
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record RunThrottleResponse(
    boolean throttled, @Nullable Instant since, List<Reason> reasons) {

  /** Nothing holds the run. */
  static final RunThrottleResponse NONE = new RunThrottleResponse(false, null, List.of());

  /** These holds and {@code reason}, held since {@code heldSince}. */
  RunThrottleResponse and(Reason reason, Instant heldSince) {
    List<Reason> all = new ArrayList<>(reasons);
    all.add(reason);
    all.sort(Comparator.comparing(Reason::check));
    Instant first = since == null || heldSince.isBefore(since) ? heldSince : since;
    return new RunThrottleResponse(true, first, List.copyOf(all));
  }

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
