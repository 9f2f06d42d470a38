package dev.dripline.store.targets;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A pending target in the line for capacity ({@link TargetLine}).
 *
 * @param name the target's name
 * @param groupName its capacity group, or {@code null}
 */
@Introspected
public record LinePlace(String name, @Nullable String groupName) {}
