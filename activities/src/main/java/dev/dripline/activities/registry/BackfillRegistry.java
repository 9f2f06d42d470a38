package dev.dripline.activities.registry;

import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchTuning;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;

/**
 * The backfill definitions this process hosts, by name, each as the engine drives it ({@link
 * KeyedBackfill}): the {@link BackfillDefinition} beans of its application context, and the plain
 * Java classes its classpath lists in {@code META-INF/services/dev.dripline.spi.BackfillDefinition}
 * ({@link ServiceLoader}), which is how a jar of one's own definitions joins a worker without a
 * Micronaut build of its own.
 *
 * <p>Invariant: names are unique and every definition's declared caps, key and table are valid; a
 * worker that would host two definitions under one name, or a definition with a batch size or cap
 * below 1, refuses to start rather than run the wrong code for a run.
 */
@Singleton
public class BackfillRegistry {
  /** Option types whose values have an order: those {@code OptionSpec.notBefore} may relate. */
  private static final Set<OptionType> ORDERED_OPTION_TYPES =
      EnumSet.of(
          OptionType.DATE,
          OptionType.DATETIME,
          OptionType.INTEGER,
          OptionType.DECIMAL,
          OptionType.DURATION);

  private final Map<String, KeyedBackfill> byName;

  /** Definitions whose keys are their own to list (a table definition needs a database). */
  public BackfillRegistry(List<? extends BackfillDefinition> definitions) {
    this((Collection<? extends BackfillDefinition>) definitions, null);
  }

  /**
   * The context's definitions and the classpath's service-loaded ones; {@code database} lists the
   * keys of table definitions (K3).
   */
  @Inject
  public BackfillRegistry(List<BackfillDefinition> beans, Database database) {
    this(withServiceLoaded(beans, ServiceLoader.load(BackfillDefinition.class)), database);
  }

  /** {@code database} lists the keys of table definitions (K3). */
  public BackfillRegistry(Collection<? extends BackfillDefinition> definitions, Database database) {
    Map<String, KeyedBackfill> map = new TreeMap<>();
    for (BackfillDefinition definition : definitions) {
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
      checkOptionRules(name, definition);
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

  /** {@code beans} and then every definition {@code serviceLoaded} lists. */
  static Collection<BackfillDefinition> withServiceLoaded(
      List<BackfillDefinition> beans, Iterable<BackfillDefinition> serviceLoaded) {
    List<BackfillDefinition> all = new ArrayList<>(beans);
    serviceLoaded.forEach(all::add);
    return all;
  }

  /** A definition's batch-size tuning (P4) must be one a run could be given. */
  private static void checkTuning(String name, BackfillDefinition definition) {
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

  /**
   * An option that may not be below another ({@code OptionSpec.notBefore}) names an option of its
   * own type, one with an order: the app compares the two from the catalogue.
   */
  private static void checkOptionRules(String name, BackfillDefinition definition) {
    Map<String, OptionSpec> options = new TreeMap<>();
    definition.options().forEach(option -> options.put(option.name(), option));
    for (OptionSpec option : definition.options()) {
      if (option.notBefore() == null) {
        continue;
      }
      OptionSpec floor = options.get(option.notBefore());
      if (floor == null
          || floor.type() != option.type()
          || !ORDERED_OPTION_TYPES.contains(option.type())) {
        throw new IllegalStateException(
            "backfill "
                + name
                + " declares option "
                + option.name()
                + " not before "
                + option.notBefore()
                + "; that must be another of its options of the same type, one of "
                + ORDERED_OPTION_TYPES);
      }
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
