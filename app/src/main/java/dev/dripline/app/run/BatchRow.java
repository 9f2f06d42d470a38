package dev.dripline.app.run;

import dev.dripline.spi.Key;
import dev.dripline.workflows.run.BatchStatus;
import java.time.Instant;

/** A row of {@code batches}: one inclusive key range of a run. */
record BatchRow(
    int number,
    Key startKey,
    Key endKey,
    int size,
    BatchStatus status,
    int attempts,
    String error,
    Instant startedAt,
    Instant finishedAt) {}
