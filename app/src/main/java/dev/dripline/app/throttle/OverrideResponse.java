package dev.dripline.app.throttle;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.throttle.CheckOverride;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * A check's limits as changed at runtime, in {@code GET /api/throttle}.
 *
 * @param threshold the threshold set, or {@code null} if only {@code resumeBelow} was
 * @param resumeBelow the {@code resumeBelow} set, or {@code null} if only the threshold was
 * @param changedBy who changed them last
 * @param changedAt when
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record OverrideResponse(
    @Nullable Double threshold, @Nullable Double resumeBelow, String changedBy, Instant changedAt) {

  static OverrideResponse of(CheckOverride row) {
    return new OverrideResponse(
        row.threshold(), row.resumeBelow(), row.changedBy(), row.changedAt());
  }
}
