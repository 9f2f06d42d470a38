package dev.dripline.spi;

import java.util.List;

/**
 * A backfill over keys of any {@link KeyType}, one column or a tuple (K1 in docs/spec.md), listed
 * by its own code. Dripline cuts the keys into batches of at most {@code batchSize} keys, as
 * inclusive {@link KeySpan}s. At batch time the definition evaluates its scope again inside the
 * span, so a record that no longer matches is skipped; processing a batch twice must be harmless.
 *
 * <p>A backfill over a table in Dripline's database need not list its keys: {@link
 * TableBackfillDefinition}.
 */
public interface KeyedBackfillDefinition extends BackfillDefinition {

  /** The key's columns and types; every key this definition returns has them. */
  KeySchema key();

  /**
   * Up to {@code limit} keys in scope strictly greater than {@code afterKey} (all keys from the
   * start when {@code afterKey} is null), ascending in {@link Key#compareTo}'s order. Fewer than
   * {@code limit} means the scope is exhausted.
   *
   * @throws PermanentBackfillException when planning can never succeed for these options
   * @throws Exception any other failure, retried by the engine
   */
  List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) throws Exception;

  /**
   * Processes the keys in scope within {@code span}.
   *
   * @throws PermanentBackfillException when retrying cannot help; the batch fails at once
   * @throws Exception any other failure, retried by the engine with backoff
   */
  void processBatch(BackfillContext context, KeySpan span) throws Exception;
}
