package dev.dripline.app.targets;

import io.micronaut.serde.annotation.Serdeable;

/**
 * Answer of {@code POST /api/targets/{name}/live-batches}: the live batch is queued and will be
 * applied in arrival order once the target is primed.
 *
 * @param id the live batch's id (arrival order)
 * @param target the target's name
 * @param status always {@code queued}
 * @param queuedAhead live batches of the target queued before it
 */
@Serdeable
public record LiveBatchResponse(long id, String target, String status, long queuedAhead) {}
