package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * An active run as the reconciler starts its workflow.
 *
 * @param id the run's id
 * @param backfill the definition's name
 * @param status pending, running or paused
 * @param targetName the target that planned it, or {@code null}
 */
@Introspected
public record ActiveRunRef(long id, String backfill, String status, @Nullable String targetName) {}
