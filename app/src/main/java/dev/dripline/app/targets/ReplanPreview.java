package dev.dripline.app.targets;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.serde.annotation.Serdeable;

/**
 * Answer of {@code POST /api/targets/{name}/replan?dryRun=true} (spec T7): what a replan would do.
 * Nothing was changed.
 *
 * @param name the target's name
 * @param dryRun always {@code true}
 * @param previousState the state now
 * @param previousConsecutiveFailures the streak now (a replan resets it)
 * @param wouldCancelRunId the active run a replan would stop, or {@code null}
 * @param resultingState always {@code pending_backfill}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record ReplanPreview(
    String name,
    boolean dryRun,
    String previousState,
    int previousConsecutiveFailures,
    Long wouldCancelRunId,
    String resultingState) {}
