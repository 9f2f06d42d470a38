package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * How many targets of one capacity group are backfilling (T2).
 *
 * @param groupName the group, or {@code null} for targets without one
 * @param backfilling how many of them are backfilling
 */
@Introspected
public record GroupLoad(@Nullable String groupName, int backfilling) {}
