package dev.dripline.spi;

/**
 * What a definition knows about the run it works for.
 *
 * @param runId the run
 * @param backfill the definition's name
 * @param options the run's options, validated, defaults applied
 */
public record BackfillContext(long runId, String backfill, BackfillOptions options) {}
