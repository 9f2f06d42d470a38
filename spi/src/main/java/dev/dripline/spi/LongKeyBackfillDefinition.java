package dev.dripline.spi;

import java.util.List;

/**
 * A backfill over {@code long} keys, listed by its own code: which keys to visit and what to do
 * with one batch. (Keys of other types: {@link KeyedBackfillDefinition}; a table's keys listed by
 * the engine: {@link TableBackfillDefinition}.) Its key shows in the catalogue as one bigint
 * column, {@code id}.
 *
 * <p>Keys are {@code long}s visited in ascending order. Dripline cuts them into batches of at most
 * {@code batchSize} keys, as inclusive {@link KeyRange}s. At batch time the definition evaluates
 * its scope again inside the range, so a record that no longer matches is skipped; processing a
 * batch twice must be harmless.
 */
public interface LongKeyBackfillDefinition extends BackfillDefinition {

  /**
   * Up to {@code limit} keys in scope strictly greater than {@code afterKey} (all keys from the
   * start when {@code afterKey} is null), ascending. Fewer than {@code limit} means the scope is
   * exhausted.
   *
   * @throws PermanentBackfillException when planning can never succeed for these options
   * @throws Exception any other failure, retried by the engine
   */
  List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) throws Exception;

  /**
   * Processes the keys in scope within {@code range}.
   *
   * @throws PermanentBackfillException when retrying cannot help; the batch fails at once
   * @throws Exception any other failure, retried by the engine with backoff
   */
  void processBatch(BackfillContext context, KeyRange range) throws Exception;
}
