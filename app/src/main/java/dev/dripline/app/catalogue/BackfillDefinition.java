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
 * @param pool the pool its runs draw from unless a run names one (P5), or {@code null}
 */
public record BackfillDefinition(
    String name,
    String description,
    List<OptionSpec> options,
    int defaultBatchSize,
    Integer maxParallelBatches,
    List<KeyColumn> key,
    String pool) {}
