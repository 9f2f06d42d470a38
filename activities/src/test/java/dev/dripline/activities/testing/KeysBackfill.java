package dev.dripline.activities.testing;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.DatabaseException;
import jakarta.inject.Singleton;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Test-only definition: keys {@code 1..items}; a batch containing {@code failKey} fails
 * (retryable), one containing {@code permanentKey} fails permanently, one containing {@code
 * connectionLostKey} loses its PostgreSQL connection (SQLState 08006) the first time it is
 * processed. Counts its calls so tests can tell whether code ran again.
 */
@Singleton
public class KeysBackfill implements LongKeyBackfillDefinition {
  public static final String NAME = "test.keys";

  private final Map<String, AtomicInteger> processed = new ConcurrentHashMap<>();
  private final AtomicInteger largestLimit = new AtomicInteger();
  private volatile long processSleepMillis;
  private volatile Consumer<KeyRange> whileProcessing;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Keys 1..items, for tests.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("items", OptionType.INTEGER, "how many keys").atLeast(0),
        OptionSpec.optional("failKey", OptionType.INTEGER, "a batch holding it fails"),
        OptionSpec.optional(
            "permanentKey", OptionType.INTEGER, "a batch holding it fails for good"),
        OptionSpec.withDefault(
            "planFailure", OptionType.STRING, "none", "none|transient|permanent"),
        OptionSpec.optional(
            "connectionLostKey",
            OptionType.INTEGER,
            "a batch holding it loses its database connection on its first run"));
  }

  @Override
  public int defaultBatchSize() {
    return 10;
  }

  @Override
  public Integer maxParallelBatches() {
    return 7;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
    largestLimit.accumulateAndGet(limit, Math::max);
    String planFailure = context.options().requireString("planFailure");
    if (planFailure.equals("permanent")) {
      throw new PermanentBackfillException("scope can never be planned");
    }
    if (planFailure.equals("transient")) {
      throw new IllegalStateException("catalogue service unavailable");
    }
    return keysUpTo(context.options().requireInteger("items"), afterKey, limit);
  }

  /**
   * Keys {@code 1..items} after {@code afterKey}, at most {@code limit}: the test definitions'
   * scope.
   */
  public static List<Long> keysUpTo(long items, Long afterKey, int limit) {
    List<Long> keys = new ArrayList<>();
    for (long key = afterKey == null ? 1 : afterKey + 1;
        key <= items && keys.size() < limit;
        key++) {
      keys.add(key);
    }
    return keys;
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range) throws Exception {
    int times =
        processed
            .computeIfAbsent(context.runId() + "/" + range.startKey(), k -> new AtomicInteger())
            .incrementAndGet();
    if (times == 1
        && context.options().integer("connectionLostKey").filter(range::contains).isPresent()) {
      throw new DatabaseException(
          new SQLException("An I/O error occurred while sending to the backend.", "08006"));
    }
    if (processSleepMillis > 0) {
      Thread.sleep(processSleepMillis);
    }
    Consumer<KeyRange> hook = whileProcessing;
    if (hook != null) {
      hook.accept(range);
    }
    context
        .options()
        .integer("permanentKey")
        .filter(range::contains)
        .ifPresent(
            key -> {
              throw new PermanentBackfillException("key " + key + " is malformed");
            });
    if (context.options().integer("failKey").filter(range::contains).isPresent()) {
      throw new IllegalStateException("database busy");
    }
  }

  /** How often {@link #processBatch} ran for the batch of {@code runId} starting at {@code key}. */
  public int timesProcessed(long runId, long startKey) {
    AtomicInteger count = processed.get(runId + "/" + startKey);
    return count == null ? 0 : count.get();
  }

  public int largestLimit() {
    return largestLimit.get();
  }

  public void processSleepMillis(long millis) {
    this.processSleepMillis = millis;
  }

  /** Runs {@code hook} inside every batch from now on, before it ends (null: none). */
  public void whileProcessing(Consumer<KeyRange> hook) {
    this.whileProcessing = hook;
  }
}
