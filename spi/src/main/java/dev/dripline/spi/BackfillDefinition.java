package dev.dripline.spi;

import java.util.List;

/**
 * A backfill written once by an engineer: which keys to visit and what to do with one batch.
 * Register an implementation as a Micronaut {@code @Singleton} in the worker; the worker publishes
 * its name, description, options and caps to the catalogue at start-up.
 *
 * <p>Keys are {@code long}s visited in ascending order. Dripline cuts them into batches of at most
 * {@code batchSize} keys, as inclusive {@link KeyRange}s. At batch time the definition evaluates
 * its scope again inside the range, so a record that no longer matches is skipped; processing a
 * batch twice must be harmless.
 */
public interface BackfillDefinition {

  /** Stable name, e.g. {@code example.sleep}; runs refer to it. */
  String name();

  /** One sentence an operator reads in the catalogue. */
  String description();

  /** Typed options a run may or must give. */
  List<OptionSpec> options();

  /** Batch size used when a run gives none. */
  int defaultBatchSize();

  /**
   * Most batches of one run that may hold a slot at once, for work that serialises on a shared
   * resource; {@code null} for no definition-level cap.
   */
  default Integer maxParallelBatches() {
    return null;
  }

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

  /**
   * Applies one live batch of a primed target (spec §2 "Live batch"). Live batches of a target are
   * applied one at a time in arrival order; applying one twice must be harmless.
   *
   * @param context the target and its options
   * @param payloadJson the live batch's payload as JSON
   * @throws PermanentBackfillException when the batch can never apply: the target needs a resync
   * @throws Exception any other failure, retried by the engine
   */
  default void applyLive(LiveContext context, String payloadJson) throws Exception {
    throw new PermanentBackfillException(name() + " does not accept live batches");
  }
}
