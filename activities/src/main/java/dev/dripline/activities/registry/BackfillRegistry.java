package dev.dripline.activities.registry;

import dev.dripline.spi.Backfill;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The backfill definitions this process hosts, by name, each as the engine drives it ({@link
 * KeyedBackfill}).
 *
 * <p>Invariant: names are unique and every definition's declared caps, key and table are valid; a
 * worker that would host two definitions under one name, or a definition with a batch size or cap
 * below 1, refuses to start rather than run the wrong code for a run.
 */
@Singleton
public class BackfillRegistry {
  private final Map<String, KeyedBackfill> byName;

  /** Definitions whose keys are their own to list (a table definition needs a database). */
  public BackfillRegistry(List<? extends Backfill> definitions) {
    this(List.<Backfill>copyOf(definitions), null);
  }

  /** {@code database} lists the keys of table definitions (K3). */
  @Inject
  public BackfillRegistry(List<Backfill> definitions, Database database) {
    Map<String, KeyedBackfill> map = new TreeMap<>();
    for (Backfill definition : definitions) {
      String name = definition.name();
      if (name == null || name.isBlank()) {
        throw new IllegalStateException(
            "backfill definition " + definition.getClass().getName() + " has no name");
      }
      KeyedBackfill keyed = KeyedBackfill.of(definition, database);
      KeyedBackfill previous = map.putIfAbsent(name, keyed);
      if (previous != null) {
        throw new IllegalStateException(
            "backfill name "
                + name
                + " is registered twice: by "
                + previous.definition().getClass().getName()
                + " and "
                + definition.getClass().getName());
      }
      if (definition.defaultBatchSize() < 1) {
        throw new IllegalStateException(
            "backfill " + name + " declares defaultBatchSize " + definition.defaultBatchSize());
      }
      Integer cap = definition.maxParallelBatches();
      if (cap != null && cap < 1) {
        throw new IllegalStateException("backfill " + name + " declares maxParallelBatches " + cap);
      }
      checkTuning(name, definition);
      Double budget = definition.maxFailedBatchesPercent();
      if (budget != null && !(budget >= 0 && budget <= 100)) {
        throw new IllegalStateException(
            "backfill " + name + " declares maxFailedBatchesPercent " + budget);
      }
      double niceRatio = definition.niceRatio();
      if (!(niceRatio >= 0 && niceRatio <= 100)) {
        throw new IllegalStateException("backfill " + name + " declares niceRatio " + niceRatio);
      }
      if (keyed.key() == null) {
        throw new IllegalStateException("backfill " + name + " declares no key");
      }
    }
    this.byName = Collections.unmodifiableMap(map);
  }

  /** A definition's batch-size tuning (P4) must be one a run could be given. */
  private static void checkTuning(String name, Backfill definition) {
    if (definition.targetBatchDuration() != null) {
      try {
        BatchTuning.targetMillis(definition.targetBatchDuration());
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(
            "backfill "
                + name
                + " declares targetBatchDuration "
                + definition.targetBatchDuration()
                + "; it "
                + e.getMessage());
      }
    }
    Integer min = definition.minBatchSize();
    Integer max = definition.maxBatchSize();
    if ((min != null && min < 1)
        || (max != null && max < 1)
        || (min != null && max != null && min > max)) {
      throw new IllegalStateException(
          "backfill "
              + name
              + " declares minBatchSize "
              + min
              + " and maxBatchSize "
              + max
              + "; each must be at least 1, and the least at most the largest");
    }
  }

  /** Every hosted definition, ordered by name. */
  public Collection<KeyedBackfill> all() {
    return byName.values();
  }

  /** The definition registered under {@code name}, if this process hosts it. */
  public Optional<KeyedBackfill> find(String name) {
    return Optional.ofNullable(name).map(byName::get);
  }

  /**
   * The definition registered under {@code name}, for use inside activities.
   *
   * @throws ApplicationFailure non-retryable, of type {@link DriplineFailure#UNKNOWN_BACKFILL}, if
   *     this worker hosts no such definition: retrying on the same worker cannot help
   */
  public KeyedBackfill require(String name) {
    return find(name)
        .orElseThrow(
            () ->
                ApplicationFailure.newNonRetryableFailure(
                    "no backfill definition named " + name + " is registered in this worker",
                    DriplineFailure.UNKNOWN_BACKFILL.name()));
  }
}
