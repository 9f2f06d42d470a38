package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import io.micronaut.serde.ObjectMapper;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RunOptionsReaderTest {
  private final CountingDefinition definition = new CountingDefinition();
  private final RunOptionsReader reader = new RunOptionsReader(ObjectMapper.getDefault());

  @Test
  void aRunsOptionsAreParsedOnceAndGiveTheSameContext() {
    BackfillContext first = reader.context(1, definition, "{\"items\":5}");
    BackfillContext again = reader.context(1, definition, "{\"items\":5}");

    assertThat(again).isSameAs(first);
    assertThat(first.options().requireInteger("items")).isEqualTo(5);
    assertThat(first.options().requireInteger("sleepMs")).isZero();
    assertThat(definition.parses.get()).isEqualTo(1);
  }

  @Test
  void anotherRunOrOtherOptionsGiveAnotherContext() {
    BackfillContext first = reader.context(1, definition, "{\"items\":5}");

    assertThat(reader.context(2, definition, "{\"items\":5}")).isNotSameAs(first);
    assertThat(reader.context(1, definition, "{\"items\":6}").options().requireInteger("items"))
        .isEqualTo(6);
    assertThat(definition.parses.get()).isEqualTo(3);
  }

  @Test
  void theCacheKeepsAtMost256Runs() {
    int runs = 1024;
    for (long run = 1; run <= runs; run++) {
      reader.context(run, definition, "{\"items\":1}");
    }
    definition.parses.set(0);

    for (long run = 1; run <= runs; run++) {
      reader.context(run, definition, "{\"items\":1}");
    }

    assertThat(definition.parses.get()).isGreaterThanOrEqualTo(runs - 256);
  }

  @Test
  void optionsThatDoNotFitArePermanentAndNotKept() {
    assertThatThrownBy(() -> reader.context(1, definition, "{\"items\":\"many\"}"))
        .isInstanceOf(PermanentBackfillException.class)
        .hasMessageContaining("items must be an integer");
    assertThatThrownBy(() -> reader.context(1, definition, "{\"items\":\"many\"}"))
        .isInstanceOf(PermanentBackfillException.class);
    assertThat(definition.parses.get()).isEqualTo(2);
  }

  /** A definition that counts how often its options are read, i.e. how often a run is parsed. */
  private static final class CountingDefinition implements LongKeyBackfillDefinition {
    final AtomicInteger parses = new AtomicInteger();

    @Override
    public String name() {
      return "test.counting";
    }

    @Override
    public String description() {
      return "counts parses";
    }

    @Override
    public List<OptionSpec> options() {
      parses.incrementAndGet();
      return List.of(
          OptionSpec.required("items", OptionType.INTEGER, "how many"),
          OptionSpec.withDefault("sleepMs", OptionType.INTEGER, 0L, "pause"));
    }

    @Override
    public int defaultBatchSize() {
      return 1;
    }

    @Override
    public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
      return List.of();
    }

    @Override
    public void processBatch(BackfillContext context, KeyRange range) {}
  }
}
