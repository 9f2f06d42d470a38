package dev.dripline.runtime.throttle;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;

/**
 * Settings of the health checks as a whole ({@code dripline.throttle.*}); the checks themselves are
 * {@link ThrottleCheckConfig}s.
 *
 * @param evaluate whether this worker process evaluates the checks on their intervals, {@code
 *     DRIPLINE_THROTTLE_EVALUATE}; off in tests that drive evaluations themselves
 */
@ConfigurationProperties("dripline.throttle")
public record ThrottleConfig(@Bindable(defaultValue = "true") boolean evaluate) {}
