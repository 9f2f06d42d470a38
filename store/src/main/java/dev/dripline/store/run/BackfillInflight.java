package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * A backfill's batches holding a slot (enqueued or running).
 *
 * @param backfill the definition's name
 * @param inflight batches holding a slot
 */
@Introspected
public record BackfillInflight(String backfill, long inflight) {}
