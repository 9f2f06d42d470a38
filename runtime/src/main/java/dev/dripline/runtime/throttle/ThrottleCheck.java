package dev.dripline.runtime.throttle;

import dev.dripline.store.throttle.CheckLimits;
import io.micronaut.core.annotation.Nullable;
import java.time.Duration;
import java.util.List;

/**
 * A valid health check (P1): every field checked and every default applied.
 *
 * @param name its name
 * @param kind what it measures
 * @param limits threshold, {@code resumeBelow} ({@code <= threshold}) and what unknown means
 * @param interval time between evaluations, positive
 * @param appliesTo backfill names; empty for all
 * @param query the {@code sql} kind's query or the {@code prometheus} kind's expression, else
 *     {@code null}
 * @param timeout statement timeout (or HTTP timeout, {@code prometheus}) of one reading, positive
 * @param olderThan {@code active-queries}' minimum query age, or {@code null}
 * @param url the database read, or {@code null} for Dripline's own; the {@code prometheus} kind's
 *     Prometheus base URL (http or https, no trailing slash)
 * @param user user for a database {@code url}, or {@code null}
 * @param password password for a database {@code url}, or {@code null}
 * @param tables {@code autovacuum}: tables watched besides those the backfills it applies to
 *     declare; empty for none (and for every other kind)
 */
public record ThrottleCheck(
    String name,
    CheckKind kind,
    CheckLimits limits,
    Duration interval,
    List<String> appliesTo,
    @Nullable String query,
    Duration timeout,
    @Nullable Duration olderThan,
    @Nullable String url,
    @Nullable String user,
    @Nullable String password,
    List<String> tables) {}
