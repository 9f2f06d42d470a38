package dev.dripline.app.run;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * One batch of a run as the API shows it: the inclusive key range {@code [startKey, endKey]}.
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
    long startKey,
    long endKey,
    int size,
    String status,
    int attempts,
    String error,
    Instant startedAt,
    Instant finishedAt) {

  static BatchResponse of(BatchRow batch) {
    return new BatchResponse(
        batch.number(),
        batch.startKey(),
        batch.endKey(),
        batch.size(),
        batch.status().wire(),
        batch.attempts(),
        batch.error(),
        batch.startedAt(),
        batch.finishedAt());
  }
}
