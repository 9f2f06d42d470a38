package dev.dripline.spi;

import java.time.Duration;
import java.util.List;

/**
 * What every backfill declares, whatever its keys: a name, a description, typed options, a batch
 * size and caps, and optionally how to apply a target's live batches. Implement one of its kinds,
 * name the class in {@code META-INF/services/dev.dripline.spi.BackfillDefinition} (or make it a
 * Micronaut {@code @Singleton}) and put its jar on the worker's classpath; the worker publishes it
 * to the catalogue at start-up (docs/own-backfills.md):
 *
 * <ul>
 *   <li>{@link TableBackfillDefinition}: a table, its key columns and a scope; the engine pages the
 *       keys itself and you write {@code processBatch} alone (K3 in docs/spec.md);
 *   <li>{@link WindowedBackfillDefinition}: a time range cut into windows, one batch each (K4);
 *   <li>{@link KeyedBackfillDefinition}: keys of any {@link KeyType}, listed by your own code;
 *   <li>{@link LongKeyBackfillDefinition}: {@code long} keys listed by your own code.
 * </ul>
 */
public interface BackfillDefinition {

  /** Stable name, e.g. {@code example.sleep}; runs refer to it. */
  String name();

  /** One sentence an operator reads in the catalogue. */
  String description();

  /**
   * Typed options a run may or must give. They are published with the definition, and the app
   * checks a run's, dry run's or target's options against them before anything is created — each
   * option alone, and the rules over the options as a whole that they declare ({@link
   * OptionSpec#notBefore(String)}: {@code to} not before {@code from}) —, since the app never loads
   * this code: a rule only code can check is a {@link PermanentBackfillException} from planning.
   */
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
   * How long one batch should take, to tune its runs' batch sizes (P4 in docs/spec.md); {@code
   * null} (the default) leaves them at their {@code batchSize}. A tuned run cuts the batches it has
   * not planned yet to the size that meets this duration at the rate its last completed batches
   * measured (their keys over their summed durations), changing the size by at most ×1.5 per step,
   * up or down, between {@link #minBatchSize()} and {@link #maxBatchSize()}. Its first batches have
   * the run's {@code batchSize}. A run may set its own ({@code targetBatchDuration} in the create
   * body), which wins. Between 1 ms and 1 day; a windowed definition's batches are one window each
   * and are not tuned.
   */
  default Duration targetBatchDuration() {
    return null;
  }

  /**
   * The least size a tuned run cuts its batches to (at least 1; default 1 when {@code null}). A run
   * may set its own, which wins. Only the run's last batch may be smaller.
   */
  default Integer minBatchSize() {
    return null;
  }

  /**
   * The largest size a tuned run cuts its batches to (at least {@link #minBatchSize()}); when
   * {@code null}, 100,000 or the run's {@code batchSize} if larger. A run may set its own, which
   * wins.
   */
  default Integer maxBatchSize() {
    return null;
  }

  /**
   * The failure budget of this definition's runs: the share of a run's finished batches, 0 to 100,
   * that may fail before the run pauses itself instead of working on (a run may set its own);
   * {@code null} for none. It applies once a run has finished 20 batches (a run may set another
   * minimum).
   */
  default Double maxFailedBatchesPercent() {
    return null;
  }

  /**
   * How much its runs' lanes rest between batches, to pace them below full speed (gh-ost's {@code
   * --nice-ratio}): after each batch, the lane that ran it rests this many times that batch's
   * duration before it starts another, keeping its slot. With 1 a lane works at most half the time;
   * load that slows batches lengthens the rests. 0 (the default) is off; at most 100. A run may set
   * its own ({@code niceRatio} in the create body), which wins.
   */
  default double niceRatio() {
    return 0;
  }

  /**
   * The pool its runs draw from unless a run names one (spec P5): a batch then needs a slot of its
   * run's cap and of the pool, whose size caps the batches in flight of every run that draws from
   * it (e.g. work that takes one global lock); {@code null} for none. The pool must exist ({@code
   * PUT /api/pools/{name}}) for a run to be created.
   */
  default String pool() {
    return null;
  }

  /**
   * The tables its batches write, each optionally schema-qualified ({@code orders}, {@code
   * sales.orders}), as published in the catalogue: a health check of kind {@code autovacuum} holds
   * this definition's runs while an autovacuum worker runs on one of them (spec P1). Names resolve
   * as {@code to_regclass} does on the database the check reads. Empty (the default) for none; a
   * {@link TableBackfillDefinition} declares its {@code table()}.
   */
  default List<String> tables() {
    return List.of();
  }

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
