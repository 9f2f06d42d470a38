package dev.dripline.runtime.throttle;

import io.micronaut.context.annotation.EachProperty;
import io.micronaut.context.annotation.Parameter;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;
import java.util.List;

/**
 * One health check as configured, {@code dripline.throttle.checks.<name>.*} (P1), before it is
 * validated into a {@link ThrottleCheck} by {@link ThrottleChecks}. Strings stay strings here so an
 * invalid value fails start-up with a message naming the check and the field.
 *
 * @param name the check's name, the key under {@code dripline.throttle.checks}
 * @param kind {@code sql}, {@code active-queries}, {@code replica-lag}, {@code autovacuum} or
 *     {@code prometheus}
 * @param threshold a value above it is over; required
 * @param resumeBelow once over, clear again only below it; default 80 % of the threshold
 * @param interval time between two evaluations
 * @param onUnknown {@code hold} or {@code proceed}
 * @param appliesTo the backfills it applies to; empty for all
 * @param query the {@code sql} kind's read-only query returning one number, or the {@code
 *     prometheus} kind's PromQL expression
 * @param timeout statement timeout of each reading (and connect timeout for {@code url}); the
 *     {@code prometheus} kind's HTTP timeout
 * @param olderThan {@code active-queries}: count only queries running longer than this
 * @param url a database of its own to read (e.g. a replica); default Dripline's own. The {@code
 *     prometheus} kind's Prometheus base URL ({@code http(s)://host:port}), required
 * @param user the user for a database {@code url}
 * @param password the password for a database {@code url}
 * @param tables {@code autovacuum}: tables to watch besides those the backfills it applies to
 *     declare
 */
@EachProperty("dripline.throttle.checks")
public record ThrottleCheckConfig(
    @Parameter String name,
    @Nullable String kind,
    @Nullable Double threshold,
    @Nullable Double resumeBelow,
    @Bindable(defaultValue = "5s") Duration interval,
    @Bindable(defaultValue = "hold") String onUnknown,
    @Nullable List<String> appliesTo,
    @Nullable String query,
    @Bindable(defaultValue = "2s") Duration timeout,
    @Nullable Duration olderThan,
    @Nullable String url,
    @Nullable String user,
    @Nullable String password,
    @Nullable List<String> tables) {}
