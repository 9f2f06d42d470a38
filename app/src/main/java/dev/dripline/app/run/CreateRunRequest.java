package dev.dripline.app.run;

import dev.dripline.catalogue.FieldError;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /api/runs} as far as it could be read without the catalogue. Fields that
 * were malformed are {@code null} and have an entry in {@link #errors}; the service adds the
 * catalogue's verdict (unknown backfill, bad options) before rejecting anything, so a client sees
 * every problem at once.
 *
 * @param backfill the definition's name
 * @param options option values as parsed from JSON; {@code null} if absent or malformed
 * @param batchSize keys per batch, or {@code null} for the definition's default
 * @param maxRecords cap on keys, or {@code null}
 * @param maxParallelBatches the requested cap, or {@code null}
 * @param startAt the scheduled start, or {@code null} to start at once
 * @param errors one entry per field rejected so far
 */
record CreateRunRequest(
    String backfill,
    Map<String, Object> options,
    Integer batchSize,
    Long maxRecords,
    Integer maxParallelBatches,
    Instant startAt,
    List<FieldError> errors) {

  boolean hasError(String field) {
    return errors.stream().anyMatch(error -> error.field().equals(field));
  }
}
