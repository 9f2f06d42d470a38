package dev.dripline.store.run;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Embeddable;
import io.micronaut.data.annotation.EmbeddedId;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.MappedProperty;
import java.time.Instant;

/**
 * A row of {@code batches}: one inclusive key range of a run, as stored. Its status changes belong
 * to the run's workflow activities; the API reads pages of it as {@link BatchView}.
 *
 * @param key the run and the batch's number in it
 * @param startKey first key of the range when it is one bigint, for the release before typed keys
 *     (migration V13); null otherwise
 * @param endKey last key of the range, likewise
 * @param startKeyBytes first key of the range ({@link dev.dripline.store.keys.KeyCodec}); null in
 *     rows written before migration V13, whose key is {@code startKey}
 * @param endKeyBytes last key of the range, likewise
 * @param size keys in the range
 * @param status pending, enqueued, running, completed, failed or stopped
 * @param attempts attempts so far
 * @param error the last attempt's error, or {@code null}
 * @param claimToken the claim that enqueued it, or {@code null}
 * @param startedAt when its current attempt started
 * @param finishedAt when it ended
 */
@MappedEntity("batches")
public record BatchEntry(
    @EmbeddedId Key key,
    @Nullable Long startKey,
    @Nullable Long endKey,
    @Nullable byte[] startKeyBytes,
    @Nullable byte[] endKeyBytes,
    int size,
    String status,
    int attempts,
    @Nullable String error,
    @Nullable Long claimToken,
    @Nullable Instant startedAt,
    @Nullable Instant finishedAt) {
  /**
   * The key of a batch.
   *
   * @param runId the run it belongs to (deleted with it)
   * @param number its number in the run, from 1 in key order
   */
  @Embeddable
  public record Key(@MappedProperty("run_id") long runId, @MappedProperty("number") int number) {}
}
