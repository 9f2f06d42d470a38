package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;

/**
 * The failing targets (T6) and how long the oldest has been failing.
 *
 * @param stuck failing targets
 * @param age seconds since the oldest streak began, 0 if none
 */
@Introspected
public record StuckTargets(long stuck, double age) {}
