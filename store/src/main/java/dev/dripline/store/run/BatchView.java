package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;
import java.time.Instant;

/**
 * A batch as a page of a run's batches shows it ({@link BatchRepository#page}).
 *
 * @param number its number in the run
 * @param startKey first key of the range
 * @param endKey last key of the range
 * @param size keys in the range
 * @param status its status, as stored
 * @param attempts attempts so far
 * @param error the last attempt's error, or {@code null}
 * @param startedAt when its current attempt started
 * @param finishedAt when it ended
 */
@Introspected
public record BatchView(
    int number,
    Key startKey,
    Key endKey,
    int size,
    String status,
    int attempts,
    @Nullable String error,
    @Nullable Instant startedAt,
    @Nullable Instant finishedAt) {}
