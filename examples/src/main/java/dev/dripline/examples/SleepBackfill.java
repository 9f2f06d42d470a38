package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.LongStream;

/**
 * {@code example.sleep}: synthetic keys {@code 1..items}, each batch sleeps {@code sleepMs} plus
 * {@code sleepMsPerKey} for each of its keys (a batch whose time grows with its size, for
 * batch-size tuning, P4). It does no real work, so it measures the engine alone, and its {@link
 * ConcurrencyWitness} lets anyone check with SQL how many of a run's batches really executed at the
 * same moment.
 */
public class SleepBackfill implements LongKeyBackfillDefinition {
  public static final String NAME = "example.sleep";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Synthetic keys 1..items; each batch sleeps sleepMs plus sleepMsPerKey per key and is"
        + " counted in example_concurrency (current, max_seen) per run, and in"
        + " example_pool_concurrency per pool when its run draws from one.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("items", OptionType.INTEGER, "Number of synthetic keys (1..items).")
            .atLeast(0),
        OptionSpec.withDefault("sleepMs", OptionType.INTEGER, 0L, "Milliseconds each batch sleeps.")
            .atLeast(0),
        OptionSpec.withDefault(
                "sleepMsPerKey",
                OptionType.INTEGER,
                0L,
                "Milliseconds each batch sleeps per key, beside sleepMs.")
            .atLeast(0),
        FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public int defaultBatchSize() {
    return 10;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit)
      throws SQLException {
    FaultInjection.checkPlan(context);
    long items = context.options().requireInteger("items");
    long start = afterKey == null ? 1 : Math.max(1, afterKey + 1);
    if (limit <= 0 || (afterKey != null && afterKey == Long.MAX_VALUE) || start > items) {
      return List.of();
    }
    // Written to avoid overflow near Long.MAX_VALUE; never produces more than limit keys.
    long end = items - start < limit ? items : start + limit - 1;
    return LongStream.rangeClosed(start, end).boxed().toList();
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range)
      throws SQLException, InterruptedException {
    FaultInjection.checkBatch(context, range);
    long sleepMs = sleepMillis(context, range);
    ConcurrencyWitness.Execution execution =
        new ConcurrencyWitness(context.dataSource())
            .enter(context.runId(), range.startKey(), context.pool());
    try {
      // Sleep while the execution holds its session: the witness counts the batch exactly as
      // long as it runs. An interrupt (cancellation) fails the batch.
      Thread.sleep(sleepMs);
    } finally {
      execution.close();
    }
  }

  /** {@code sleepMs} plus {@code sleepMsPerKey} for each key of {@code range} (1..items, dense). */
  private static long sleepMillis(BackfillContext context, KeyRange range) {
    long sleepMs = context.options().integer("sleepMs").orElse(0L);
    long perKey = context.options().integer("sleepMsPerKey").orElse(0L);
    long keys = range.endKey() - range.startKey() + 1;
    try {
      return Math.addExact(sleepMs, Math.multiplyExact(perKey, keys));
    } catch (ArithmeticException beyondALong) {
      return Long.MAX_VALUE;
    }
  }
}
