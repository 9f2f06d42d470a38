package dev.dripline.spi;

/**
 * What a definition knows about the target whose live batch it applies.
 *
 * @param target the target's name
 * @param backfill the definition's name
 * @param options the target's options, validated, defaults applied
 * @param liveBatchId the live batch, unique and increasing in arrival order
 * @param dataSource Dripline's database, for the definition's statements; its connections are the
 *     definition's to close. {@code null} only where a caller has none to give (a test)
 */
public record LiveContext(
    String target,
    String backfill,
    BackfillOptions options,
    long liveBatchId,
    javax.sql.DataSource dataSource) {
  /** The context of a live batch, without a database. */
  public LiveContext(String target, String backfill, BackfillOptions options, long liveBatchId) {
    this(target, backfill, options, liveBatchId, null);
  }
}
