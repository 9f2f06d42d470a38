package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.spi.KeyJson;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * One batch of a run as the API shows it: the inclusive key range {@code [startKey, endKey]}, each
 * key as JSON of its type ({@link KeyJson}: {@code 42}, {@code "0b6a…"}, {@code [1042, 3]}).
 *
 * @param number 1-based, in key order
 * @param startKey first key of the range
 * @param endKey last key of the range
 * @param size keys in the range
 * @param status pending, enqueued, running, completed, failed or stopped
 * @param attempts attempts made so far
 * @param error the last attempt's error, if it failed
 * @param startedAt when its current attempt started
 * @param finishedAt when it ended
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record BatchResponse(
    int number,
    Object startKey,
    Object endKey,
    int size,
    String status,
    int attempts,
    String error,
    Instant startedAt,
    Instant finishedAt) {

  static BatchResponse of(BatchRow batch) {
    return new BatchResponse(
        batch.number(),
        KeyJson.toJson(batch.startKey()),
        KeyJson.toJson(batch.endKey()),
        batch.size(),
        batch.status().wire(),
        batch.attempts(),
        batch.error(),
        batch.startedAt(),
        batch.finishedAt());
  }
}
