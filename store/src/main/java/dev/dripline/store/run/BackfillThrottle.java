package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * A backfill's runs held by the brake or a health check (P2), for the metrics snapshot.
 *
 * @param backfill the definition's name
 * @param throttled its running runs that something holds now
 * @param throttledSeconds the time its runs have been held, ended holds and open ones
 */
@Introspected
public record BackfillThrottle(String backfill, long throttled, double throttledSeconds) {}
