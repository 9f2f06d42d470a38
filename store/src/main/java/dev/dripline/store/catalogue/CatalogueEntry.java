package dev.dripline.store.catalogue;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code backfill_definitions}: a backfill definition as a worker published it. The app
 * never loads backfill code, so this is all it knows of a definition.
 *
 * @param name the definition's stable name
 * @param description what it does
 * @param optionsSchema its option schema as JSON text (an array of {@code OptionSpec})
 * @param defaultBatchSize keys per batch unless a run says otherwise
 * @param maxParallelBatches the definition's cap, or {@code null} for none
 * @param publishedAt when a worker last published it
 * @param key its key's columns as JSON text ({@code [{name, type}]}); null if published by a worker
 *     from before typed keys, whose definitions all have one bigint key
 * @param targetBatchMillis the definition's target batch duration in milliseconds (P4), or {@code
 *     null}: its runs are not tuned unless they set one
 * @param minBatchSize the least batch size of its tuned runs, or {@code null}
 * @param maxBatchSize the largest batch size of its tuned runs, or {@code null}
 * @param maxFailedBatchesPercent its runs' failure budget (P6b), or {@code null} for none
 * @param pool the pool its runs draw from unless a run names one (P5), or {@code null} for none
 * @param niceRatio how much its runs' lanes rest between batches, times a batch's duration (0: not
 *     paced)
 * @param keyTable the table a {@code TableBackfillDefinition} scans for its keys, whose key
 *     columns' collation orders its text keys; {@code null} for other definitions (and for one
 *     published before migration V33)
 */
@MappedEntity("backfill_definitions")
public record CatalogueEntry(
    @Id String name,
    String description,
    String optionsSchema,
    int defaultBatchSize,
    @Nullable Integer maxParallelBatches,
    @Nullable Double maxFailedBatchesPercent,
    Instant publishedAt,
    @Nullable String key,
    @Nullable Long targetBatchMillis,
    @Nullable Integer minBatchSize,
    @Nullable Integer maxBatchSize,
    @Nullable String pool,
    double niceRatio,
    @Nullable String keyTable) {}
