package dev.dripline.activities.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackfillRegistryTest {

  private static LongKeyBackfillDefinition named(String name, int batchSize, Integer cap) {
    return new SimpleDefinition(name) {
      @Override
      public int defaultBatchSize() {
        return batchSize;
      }

      @Override
      public Integer maxParallelBatches() {
        return cap;
      }
    };
  }

  /** A plain Java definition, as a jar of one's own lists it for {@link ServiceLoader}. */
  public static final class ServiceLoadedDefinition extends SimpleDefinition {
    public ServiceLoadedDefinition() {
      super("own.service-loaded");
    }
  }

  /** A definition that plans and processes nothing, as a class a service file can name. */
  public abstract static class SimpleDefinition implements LongKeyBackfillDefinition {
    private final String name;

    SimpleDefinition(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String description() {
      return "d";
    }

    @Override
    public List<OptionSpec> options() {
      return List.of();
    }

    @Override
    public int defaultBatchSize() {
      return 10;
    }

    @Override
    public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
      return List.of();
    }

    @Override
    public void processBatch(BackfillContext context, KeyRange range) {}
  }

  /**
   * The definitions a directory's {@code META-INF/services/dev.dripline.spi.BackfillDefinition}
   * lists.
   */
  private static ServiceLoader<BackfillDefinition> serviceFile(Path directory, String... classes)
      throws IOException {
    Path services = Files.createDirectories(directory.resolve("META-INF/services"));
    Files.writeString(
        services.resolve(BackfillDefinition.class.getName()), String.join("\n", classes));
    URL[] root = {directory.toUri().toURL()};
    return ServiceLoader.load(
        BackfillDefinition.class,
        new URLClassLoader(root, BackfillRegistryTest.class.getClassLoader()));
  }

  @Test
  void hostsTheClasspathsServiceLoadedDefinitionsBesideTheBeans(@TempDir Path directory)
      throws IOException {
    ServiceLoader<BackfillDefinition> listed =
        serviceFile(directory, ServiceLoadedDefinition.class.getName());

    BackfillRegistry registry =
        new BackfillRegistry(
            BackfillRegistry.withServiceLoaded(List.of(named("a.bean", 5, null)), listed), null);

    assertThat(registry.all())
        .extracting(KeyedBackfill::name)
        .containsExactly("a.bean", "own.service-loaded");
  }

  @Test
  void refusesAServiceLoadedDefinitionUnderABeansName(@TempDir Path directory) throws IOException {
    ServiceLoader<BackfillDefinition> listed =
        serviceFile(directory, ServiceLoadedDefinition.class.getName());
    List<BackfillDefinition> beans = List.of(named("own.service-loaded", 5, null));

    assertThatThrownBy(
            () -> new BackfillRegistry(BackfillRegistry.withServiceLoaded(beans, listed), null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("own.service-loaded is registered twice");
  }

  @Test
  void findsDefinitionsByNameInNameOrder() {
    BackfillRegistry registry =
        new BackfillRegistry(List.of(named("b.two", 1, null), named("a.one", 5, 2)));

    assertThat(registry.all()).extracting(KeyedBackfill::name).containsExactly("a.one", "b.two");
    assertThat(registry.find("b.two")).isPresent();
    assertThat(registry.find("c.three")).isEmpty();
    assertThat(registry.require("a.one").definition().defaultBatchSize()).isEqualTo(5);
    assertThat(registry.require("a.one").key()).isEqualTo(KeySchema.LONG);
  }

  /** A definition with these options. */
  private static LongKeyBackfillDefinition withOptions(OptionSpec... options) {
    LongKeyBackfillDefinition plain = named("ranged", 10, null);
    return new LongKeyBackfillDefinition() {
      @Override
      public String name() {
        return plain.name();
      }

      @Override
      public String description() {
        return plain.description();
      }

      @Override
      public List<OptionSpec> options() {
        return List.of(options);
      }

      @Override
      public int defaultBatchSize() {
        return plain.defaultBatchSize();
      }

      @Override
      public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
        return List.of();
      }

      @Override
      public void processBatch(BackfillContext context, KeyRange range) {}
    };
  }

  @Test
  void rejectsAnOptionNotBeforeOneItCannotBeComparedToAtStartUp() {
    OptionSpec from = OptionSpec.required("from", OptionType.DATE, "first day");
    for (LongKeyBackfillDefinition bad :
        List.of(
            withOptions(from, OptionSpec.required("to", OptionType.DATE, "").notBefore("since")),
            withOptions(from, OptionSpec.required("to", OptionType.DATETIME, "").notBefore("from")),
            withOptions(
                OptionSpec.required("a", OptionType.STRING, ""),
                OptionSpec.required("b", OptionType.STRING, "").notBefore("a")))) {
      assertThatThrownBy(() -> new BackfillRegistry(List.of(bad)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not before");
    }
    assertThat(
            new BackfillRegistry(
                    List.of(
                        withOptions(
                            from,
                            OptionSpec.required("to", OptionType.DATE, "").notBefore("from"))))
                .find("ranged"))
        .isPresent();
  }

  @Test
  void rejectsDuplicateNamesAtStartUp() {
    assertThatThrownBy(
            () -> new BackfillRegistry(List.of(named("same", 1, null), named("same", 2, null))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("same")
        .hasMessageContaining("registered twice");
  }

  /** A definition tuned to {@code target} within {@code min}..{@code max} (P4). */
  private static LongKeyBackfillDefinition tuned(Duration target, Integer min, Integer max) {
    LongKeyBackfillDefinition plain = named("tuned", 10, null);
    return new LongKeyBackfillDefinition() {
      @Override
      public String name() {
        return plain.name();
      }

      @Override
      public String description() {
        return plain.description();
      }

      @Override
      public List<OptionSpec> options() {
        return plain.options();
      }

      @Override
      public int defaultBatchSize() {
        return plain.defaultBatchSize();
      }

      @Override
      public Duration targetBatchDuration() {
        return target;
      }

      @Override
      public Integer minBatchSize() {
        return min;
      }

      @Override
      public Integer maxBatchSize() {
        return max;
      }

      @Override
      public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
        return List.of();
      }

      @Override
      public void processBatch(BackfillContext context, KeyRange range) {}
    };
  }

  @Test
  void acceptsATuningARunCouldBeGiven() {
    BackfillRegistry registry = new BackfillRegistry(List.of(tuned(Duration.ofSeconds(2), 10, 10)));
    assertThat(registry.require("tuned").definition().targetBatchDuration())
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void rejectsATuningNoRunCouldBeGivenAtStartUp() {
    for (LongKeyBackfillDefinition bad :
        List.of(
            tuned(Duration.ZERO, null, null),
            tuned(Duration.ofSeconds(-1), null, null),
            tuned(Duration.ofDays(2), null, null),
            tuned(Duration.ofSeconds(1), 0, null),
            tuned(Duration.ofSeconds(1), null, 0),
            tuned(Duration.ofSeconds(1), 11, 10))) {
      assertThatThrownBy(() -> new BackfillRegistry(List.of(bad)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("backfill tuned declares");
    }
  }

  @Test
  void rejectsInvalidCapsAtStartUp() {
    assertThatThrownBy(() -> new BackfillRegistry(List.of(named("zero.batch", 0, null))))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> new BackfillRegistry(List.of(named("zero.cap", 1, 0))))
        .isInstanceOf(IllegalStateException.class);
  }

  /** A definition whose runs' lanes rest {@code ratio} times each batch's duration. */
  private static LongKeyBackfillDefinition paced(double ratio) {
    LongKeyBackfillDefinition plain = named("paced", 10, null);
    return new LongKeyBackfillDefinition() {
      @Override
      public String name() {
        return plain.name();
      }

      @Override
      public String description() {
        return plain.description();
      }

      @Override
      public List<OptionSpec> options() {
        return plain.options();
      }

      @Override
      public int defaultBatchSize() {
        return plain.defaultBatchSize();
      }

      @Override
      public double niceRatio() {
        return ratio;
      }

      @Override
      public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
        return List.of();
      }

      @Override
      public void processBatch(BackfillContext context, KeyRange range) {}
    };
  }

  @Test
  void acceptsANiceRatioFromZeroToAHundred() {
    for (double ratio : new double[] {0, 0.5, 100}) {
      assertThat(new BackfillRegistry(List.of(paced(ratio))).require("paced").definition())
          .extracting(definition -> definition.niceRatio())
          .isEqualTo(ratio);
    }
  }

  @Test
  void rejectsANiceRatioNoRunCouldBeGivenAtStartUp() {
    for (double bad : new double[] {-0.1, 100.5, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThatThrownBy(() -> new BackfillRegistry(List.of(paced(bad))))
          .as("%s", bad)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("backfill paced declares niceRatio");
    }
  }

  @Test
  void unknownNameIsANonRetryableFailure() {
    BackfillRegistry registry = new BackfillRegistry(List.of());

    assertThatThrownBy(() -> registry.require("nope"))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.UNKNOWN_BACKFILL.name());
              assertThat(failure.isNonRetryable()).isTrue();
            });
  }
}
