package dev.dripline.activities.testing;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Test-only target definition: records the live batches it applies per target, in order, and the
 * options it was probed with. A payload containing {@code "permanent"} fails permanently, one
 * containing {@code "transient"} fails retryably. Its runs are tuned to a second per batch, from 20
 * keys up (P4).
 */
@Singleton
public class LiveBackfill implements LongKeyBackfillDefinition {
  public static final String NAME = "test.live";

  private final Map<String, List<Long>> applied = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Object>> probedOptions = new ConcurrentHashMap<>();

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Records live batches, for tests.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("tenant", OptionType.STRING, "whose live batches"),
        OptionSpec.optional("faultTag", OptionType.STRING, "fault tag"));
  }

  @Override
  public int defaultBatchSize() {
    return 50;
  }

  /** Tuned (P4), so a target's run and the catalogue carry a definition's tuning. */
  @Override
  public Duration targetBatchDuration() {
    return Duration.ofSeconds(1);
  }

  @Override
  public Integer minBatchSize() {
    return 20;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
    probedOptions.put(context.options().requireString("tenant"), context.options().asMap());
    return List.of();
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range) {}

  @Override
  public void applyLive(LiveContext context, String payloadJson) {
    if (payloadJson.contains("permanent")) {
      throw new PermanentBackfillException("payload can never apply");
    }
    if (payloadJson.contains("transient")) {
      throw new IllegalStateException("sink busy");
    }
    applied
        .computeIfAbsent(context.target(), k -> new CopyOnWriteArrayList<>())
        .add(context.liveBatchId());
  }

  /** Live batch ids applied for {@code target}, in the order they were applied. */
  public List<Long> applied(String target) {
    return applied.getOrDefault(target, List.of());
  }

  /** The options the last planning probe for {@code tenant} saw. */
  public Map<String, Object> probedOptions(String tenant) {
    return probedOptions.get(tenant);
  }
}
