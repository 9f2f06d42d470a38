package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code throttle_check_overrides}: limits of a check changed at runtime ({@code PATCH
 * /api/throttle/checks/{name}}), which win over its configuration.
 *
 * @param name the check's name
 * @param threshold the threshold that replaces the configured one, or {@code null} to keep it
 * @param resumeBelow the {@code resumeBelow} that replaces the configured one, or {@code null} to
 *     keep it
 * @param changedBy the name of the principal who changed it last
 * @param changedAt when it was changed last
 */
@MappedEntity("throttle_check_overrides")
public record CheckOverride(
    @Id String name,
    @Nullable Double threshold,
    @Nullable Double resumeBelow,
    String changedBy,
    Instant changedAt) {}
