package dev.dripline.spi;

import java.sql.Connection;
import java.util.List;

/**
 * A backfill over a table in Dripline's own database that writes {@code processBatch} alone (K3 in
 * docs/spec.md): it declares the table, its key columns and a scope, and the engine lists the keys
 * in scope itself, a page at a time, with a row comparison an index on the key serves:
 *
 * <pre>{@code
 * select a, b from <table> where (a, b) > (?, ?) and (<scope>) order by a, b limit ?
 * }</pre>
 *
 * <p>Text keys compare in their column's collation, as the index on the key does (docs/keys.md).
 * Each batch runs in Dripline's transaction, which commits its writes together with the batch's
 * completion ({@link TransactionalBackfillDefinition} says what that gives); {@link
 * TableBatch#where()} selects the batch's rows still in scope, so processing it twice changes
 * nothing more.
 */
public interface TableBackfillDefinition extends BackfillDefinition {

  /** The table, optionally schema-qualified: lower-case SQL identifiers. */
  String table();

  /** Its {@link #table()}; override to declare more tables its batches write. */
  @Override
  default List<String> tables() {
    return List.of(table());
  }

  /** The key's columns, in order; the table should have an index (or primary key) on them. */
  KeySchema key();

  /** The rows a run with {@code options} visits; all rows unless overridden. */
  default TableScope scope(BackfillOptions options) {
    return TableScope.ALL;
  }

  /**
   * Called before each page of keys is listed for a run: throw to fail that planning attempt, e.g.
   * while something the backfill needs is not ready ({@link PermanentBackfillException} when it
   * never will be). Does nothing unless overridden.
   */
  default void beforePlanning(BackfillContext context) throws Exception {}

  /**
   * Processes one batch inside {@code transaction}, which Dripline commits together with the
   * batch's completion, or rolls back. It must neither commit, roll back nor change the
   * transaction's auto-commit or isolation.
   *
   * @throws PermanentBackfillException when retrying cannot help; the batch fails at once
   * @throws Exception any other failure, retried by the engine with backoff
   */
  void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws Exception;
}
