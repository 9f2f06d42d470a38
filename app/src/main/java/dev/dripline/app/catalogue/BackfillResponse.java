package dev.dripline.app.catalogue;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.OptionSpec;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Duration;
import java.util.List;

/**
 * One entry of {@code GET /api/backfills}.
 *
 * @param name the definition's name, used as {@code backfill} when creating a run
 * @param description what it does
 * @param options the option schema
 * @param defaultBatchSize keys per batch unless a run says otherwise
 * @param maxParallelBatches the definition's cap, {@code null} for none
 * @param key its key's columns, in order: {@code [{name, type}]} (K1)
 * @param targetBatchDuration how long its runs' batches should take, ISO-8601 (P4); {@code null}:
 *     its runs are not tuned unless they set one
 * @param minBatchSize the least batch size of its tuned runs, {@code null} for the default (1)
 * @param maxBatchSize the largest batch size of its tuned runs, {@code null} for the default
 * @param maxFailedBatchesPercent its runs' failure budget unless a run sets its own (P6b), {@code
 *     null} for none
 * @param pool the pool its runs draw from unless a run names one (P5), {@code null} for none
 * @param niceRatio how much its runs' lanes rest after each batch, times the batch's duration,
 *     unless a run sets its own; 0: not paced
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record BackfillResponse(
    String name,
    String description,
    List<OptionSpec> options,
    int defaultBatchSize,
    Integer maxParallelBatches,
    List<KeyColumn> key,
    String targetBatchDuration,
    Integer minBatchSize,
    Integer maxBatchSize,
    Double maxFailedBatchesPercent,
    String pool,
    double niceRatio) {

  static BackfillResponse of(PublishedBackfill definition) {
    return new BackfillResponse(
        definition.name(),
        definition.description(),
        definition.options(),
        definition.defaultBatchSize(),
        definition.maxParallelBatches(),
        definition.key(),
        definition.targetBatchMillis() == null
            ? null
            : Duration.ofMillis(definition.targetBatchMillis()).toString(),
        definition.minBatchSize(),
        definition.maxBatchSize(),
        definition.maxFailedBatchesPercent(),
        definition.pool(),
        definition.niceRatio());
  }
}
