package dev.dripline.spi;

import javax.sql.DataSource;

/**
 * What a definition knows about the run it works for.
 *
 * @param runId the run
 * @param backfill the definition's name
 * @param options the run's options, validated, defaults applied
 * @param pool the pool the run draws from (spec P5), or {@code null} if it draws from none
 * @param dataSource Dripline's database, for the definition's own statements: listing its keys, or
 *     a batch's writes that need no transaction of Dripline's (a {@link TableBackfillDefinition}'s
 *     or {@link TransactionalBackfillDefinition}'s batch gets its transaction's connection
 *     instead). Its connections are the definition's to close. {@code null} only where a caller has
 *     none to give, e.g. a test of a definition that needs none.
 */
public record BackfillContext(
    long runId, String backfill, BackfillOptions options, String pool, DataSource dataSource) {
  /** The context of a run that draws from no pool, without a database. */
  public BackfillContext(long runId, String backfill, BackfillOptions options) {
    this(runId, backfill, options, null, null);
  }

  /** The context of a run, without a database. */
  public BackfillContext(long runId, String backfill, BackfillOptions options, String pool) {
    this(runId, backfill, options, pool, null);
  }
}
