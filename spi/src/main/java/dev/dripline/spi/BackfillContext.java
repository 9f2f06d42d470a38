package dev.dripline.spi;

/**
 * What a definition knows about the run it works for.
 *
 * @param runId the run
 * @param backfill the definition's name
 * @param options the run's options, validated, defaults applied
 * @param pool the pool the run draws from (spec P5), or {@code null} if it draws from none
 */
public record BackfillContext(long runId, String backfill, BackfillOptions options, String pool) {
  /** The context of a run that draws from no pool. */
  public BackfillContext(long runId, String backfill, BackfillOptions options) {
    this(runId, backfill, options, null);
  }
}
