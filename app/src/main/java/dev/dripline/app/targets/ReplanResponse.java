package dev.dripline.app.targets;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.serde.annotation.Serdeable;

/**
 * Answer of {@code POST /api/targets/{name}/replan} (spec T7): the target is back in {@code
 * pending_backfill} with its streak reset, and its run, if it had an active one, was told to stop.
 *
 * @param name the target's name
 * @param dryRun always {@code false}
 * @param previousState the state before the replan
 * @param previousConsecutiveFailures the streak before the replan
 * @param cancelledRunId the run that was stopped, or {@code null}
 * @param state always {@code pending_backfill}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record ReplanResponse(
    String name,
    boolean dryRun,
    String previousState,
    int previousConsecutiveFailures,
    Long cancelledRunId,
    String state) {}
