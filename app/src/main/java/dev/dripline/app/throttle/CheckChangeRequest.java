package dev.dripline.app.throttle;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;

/**
 * The body of {@code PATCH /api/throttle/checks/{name}} (P3): the limits to change; an absent field
 * keeps its current value.
 *
 * @param threshold the new threshold, or {@code null}
 * @param resumeBelow the new {@code resumeBelow}, or {@code null}
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record CheckChangeRequest(@Nullable Double threshold, @Nullable Double resumeBelow) {}
