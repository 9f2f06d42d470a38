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
 * @param pool the pool its runs draw from unless a run names one (P5), or {@code null} for none
 */
@MappedEntity("backfill_definitions")
public record CatalogueEntry(
    @Id String name,
    String description,
    String optionsSchema,
    int defaultBatchSize,
    @Nullable Integer maxParallelBatches,
    Instant publishedAt,
    @Nullable String key,
    @Nullable String pool) {}
