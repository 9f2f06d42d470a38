package dev.dripline.app.catalogue;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.OptionSpec;
import io.micronaut.serde.annotation.Serdeable;
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
 * @param pool the pool its runs draw from unless a run names one (P5), {@code null} for none
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
    String pool) {

  static BackfillResponse of(BackfillDefinition definition) {
    return new BackfillResponse(
        definition.name(),
        definition.description(),
        definition.options(),
        definition.defaultBatchSize(),
        definition.maxParallelBatches(),
        definition.key(),
        definition.pool());
  }
}
