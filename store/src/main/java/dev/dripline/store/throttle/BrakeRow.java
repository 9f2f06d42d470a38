package dev.dripline.store.throttle;

import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * The row of {@code throttle_brake} (P3): present while the brake holds every run.
 *
 * @param id always {@code true}: the table has at most one row
 * @param reason why the brake was put on
 * @param heldBy the name of the principal who put it on
 * @param since when it was put on
 */
@MappedEntity("throttle_brake")
public record BrakeRow(@Id Boolean id, String reason, String heldBy, Instant since) {}
