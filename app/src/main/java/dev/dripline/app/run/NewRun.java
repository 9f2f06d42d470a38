package dev.dripline.app.run;

import java.time.Instant;

/**
 * A validated run, ready to be inserted as {@code pending}.
 *
 * @param backfill the definition's name
 * @param optionsJson normalized options as canonical JSON (also the duplicate key of R3)
 * @param batchSize keys per batch
 * @param maxRecords cap on keys, or {@code null}
 * @param requestedMaxParallelBatches the cap the request asked for, or {@code null}
 * @param maxParallelBatches the effective cap
 * @param startAt scheduled start, or {@code null}
 * @param createdBy who asked
 * @param idempotencyKey the request's {@code Idempotency-Key}, or {@code null}
 * @param pool the pool it draws from (P5), or {@code null}
 */
record NewRun(
    String backfill,
    String optionsJson,
    int batchSize,
    Long maxRecords,
    Integer requestedMaxParallelBatches,
    int maxParallelBatches,
    Instant startAt,
    String createdBy,
    String idempotencyKey,
    String pool) {}
