package dev.dripline.app.catalogue;

import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.OptionSpec;
import java.util.List;

/**
 * A backfill definition as the worker published it to {@code backfill_definitions}.
 *
 * @param name the definition's stable name
 * @param description what it does
 * @param options its option schema
 * @param defaultBatchSize keys per batch unless a run says otherwise
 * @param maxParallelBatches the definition's cap, or {@code null} for none
 * @param key its key's columns and types (K1)
 * @param targetBatchMillis the target batch duration of its runs in milliseconds (P4), or {@code
 *     null}: its runs are not tuned unless they set one
 * @param minBatchSize the least batch size of its tuned runs, or {@code null}
 * @param maxBatchSize the largest batch size of its tuned runs, or {@code null}
 * @param maxFailedBatchesPercent its runs' failure budget (P6b), or {@code null} for none
 * @param pool the pool its runs draw from unless a run names one (P5), or {@code null}
 * @param niceRatio how much its runs' lanes rest between batches, times a batch's duration (0: not
 *     paced)
 * @param keyTable the table a table definition's keys come from, whose key columns' collation
 *     orders its text keys (docs/keys.md); {@code null} for other definitions
 */
public record PublishedBackfill(
    String name,
    String description,
    List<OptionSpec> options,
    int defaultBatchSize,
    Integer maxParallelBatches,
    List<KeyColumn> key,
    Long targetBatchMillis,
    Integer minBatchSize,
    Integer maxBatchSize,
    Double maxFailedBatchesPercent,
    String pool,
    double niceRatio,
    String keyTable) {}
