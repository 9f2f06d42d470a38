package dev.dripline.spi;

/**
 * What a definition knows about the target whose live batch it applies.
 *
 * @param target the target's name
 * @param backfill the definition's name
 * @param options the target's options, validated, defaults applied
 * @param liveBatchId the live batch, unique and increasing in arrival order
 */
public record LiveContext(
    String target, String backfill, BackfillOptions options, long liveBatchId) {}
