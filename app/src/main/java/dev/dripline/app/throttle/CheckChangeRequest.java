package dev.dripline.app.throttle;

import io.micronaut.serde.annotation.Serdeable;

/**
 * The body of {@code PATCH /api/throttle/checks/{name}} (P3): the limits to change; an absent field
 * keeps its current value.
 *
 * @param threshold the new threshold, or {@code null}
 * @param resumeBelow the new {@code resumeBelow}, or {@code null}
 */
@Serdeable
record CheckChangeRequest(Double threshold, Double resumeBelow) {}
