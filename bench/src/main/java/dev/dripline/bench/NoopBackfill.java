package dev.dripline.bench;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.stream.LongStream;

/**
 * {@code bench.noop}: synthetic keys {@code 1..items} whose batches do nothing at all. Only the
 * Dripline JVM the bench starts (from the bench's classpath) registers it. With {@code sleepMs} a
 * batch sleeps that long and does nothing else (SIZING's batches that take time). W1 runs it next
 * to {@code example.sleep} to separate the engine's own cost from the example's concurrency witness
 * (two serialised PostgreSQL transactions per batch on one row per run).
 */
@Singleton
public class NoopBackfill implements LongKeyBackfillDefinition {
  public static final String NAME = "bench.noop";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Benchmark only: synthetic keys 1..items; batches do nothing.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("items", OptionType.INTEGER, "Number of synthetic keys (1..items).")
            .atLeast(0),
        OptionSpec.withDefault(
                "sleepMs",
                OptionType.INTEGER,
                0L,
                "Milliseconds each batch sleeps (SIZING: a batch that takes time, without"
                    + " example.sleep's witness).")
            .atLeast(0),
        OptionSpec.withDefault(
                "copy",
                OptionType.INTEGER,
                0L,
                "Ignored: tells runs with otherwise equal options apart (SIZING starts several"
                    + " at once).")
            .atLeast(0));
  }

  @Override
  public int defaultBatchSize() {
    return 1;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
    long items = context.options().requireInteger("items");
    long start = afterKey == null ? 1 : afterKey + 1;
    if (limit <= 0 || start > items) {
      return List.of();
    }
    long end = Math.min(items, start + limit - 1);
    return LongStream.rangeClosed(start, end).boxed().toList();
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range) throws InterruptedException {
    // Nothing but the sleep asked for: the engine's cost alone.
    long sleepMs = context.options().integer("sleepMs").orElse(0L);
    if (sleepMs > 0) {
      Thread.sleep(sleepMs);
    }
  }
}
