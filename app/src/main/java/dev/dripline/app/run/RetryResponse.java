package dev.dripline.app.run;

import io.micronaut.serde.annotation.Serdeable;

/**
 * Answer of {@code POST /api/runs/{id}/retry}.
 *
 * @param requeued batches moved back to pending
 */
@Serdeable
public record RetryResponse(int requeued) {}
