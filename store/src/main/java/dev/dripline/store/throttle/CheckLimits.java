package dev.dripline.store.throttle;

/**
 * The numbers the state rule compares a reading with.
 *
 * @param threshold a value above it is over
 * @param resumeBelow once over, a check is clear again only below it; {@code <= threshold}
 * @param onUnknown whether an unknown reading holds
 */
public record CheckLimits(double threshold, double resumeBelow, OnUnknown onUnknown) {}
