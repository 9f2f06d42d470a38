package dev.dripline.app.throttle;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.throttle.CheckOverride;
import dev.dripline.store.throttle.CheckRow;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * One health check in {@code GET /api/throttle}: its last evaluation, with the limits in effect.
 *
 * @param name the check's name
 * @param kind {@code sql}, {@code active-queries}, {@code replica-lag}, {@code autovacuum} or
 *     {@code prometheus}
 * @param value the last reading, or {@code null} if it was unknown (a {@code prometheus} check's
 *     {@code +Inf} is written as the string {@code "Infinity"})
 * @param threshold above it the check is over: the runtime override's, else the one the last
 *     evaluation was judged by
 * @param resumeBelow once over, it is clear again only below this (the override's, else the last
 *     evaluation's)
 * @param state {@code clear}, {@code over} or {@code unknown}
 * @param holding whether it would hold the runs it applies to
 * @param since when it last started or stopped holding
 * @param evaluatedAt when it was last evaluated
 * @param error why the reading was unknown, or {@code null}
 * @param override the limits changed at runtime, or {@code null} if none were
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record CheckResponse(
    String name,
    String kind,
    @Nullable Double value,
    double threshold,
    double resumeBelow,
    String state,
    boolean holding,
    Instant since,
    Instant evaluatedAt,
    @Nullable String error,
    @Nullable OverrideResponse override) {

  static CheckResponse of(CheckRow row, @Nullable CheckOverride override) {
    double threshold = row.threshold();
    double resumeBelow = row.resumeBelow();
    if (override != null) {
      threshold = override.threshold() == null ? threshold : override.threshold();
      resumeBelow = override.resumeBelow() == null ? resumeBelow : override.resumeBelow();
    }
    return new CheckResponse(
        row.name(),
        row.kind(),
        row.value(),
        threshold,
        resumeBelow,
        row.state(),
        row.holding(),
        row.since(),
        row.evaluatedAt(),
        row.error(),
        override == null ? null : OverrideResponse.of(override));
  }
}
