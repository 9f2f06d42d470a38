package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.run.PlanningActivitiesImpl.PlannedBatch;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.KeyedBackfillDefinition;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import java.util.LinkedList;
import java.util.List;
import java.util.RandomAccess;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** How planning checks and cuts the keys a definition lists, without a database. */
class PlanningKeysTest {
  private static final KeyedBackfill BIGINT_KEYED =
      KeyedBackfill.of(new Typed(KeySchema.of(KeyColumn.of("id", KeyType.BIGINT))), null);

  @Test
  void aLongDefinitionsKeysAreCheckedWithoutACopyAndCutAtTheirBoundaries() throws Exception {
    KeyedBackfill longs = KeyedBackfill.of(new Longs(25), null);

    List<Key> keys = longs.keysAfter(null, Key.ofLong(0), 100);
    List<Key> checked = PlanningActivitiesImpl.checked(longs, Key.ofLong(0), keys, 100);
    List<PlannedBatch> batches = PlanningActivitiesImpl.cut(checked, 10, 1, true);

    assertThat(checked).isSameAs(keys).hasSize(25);
    assertThat(batches)
        .containsExactly(
            new PlannedBatch(1, Key.ofLong(1), Key.ofLong(10), 10),
            new PlannedBatch(2, Key.ofLong(11), Key.ofLong(20), 10),
            new PlannedBatch(3, Key.ofLong(21), Key.ofLong(25), 5));
  }

  @Test
  void keysFromTheFirstThatDoesNotFitOnAreConformedAndNoneIsLost() {
    List<Key> keys = List.of(Key.of(1L), Key.of(2L), Key.of(3), Key.of(4L));

    List<Key> checked = PlanningActivitiesImpl.checked(BIGINT_KEYED, null, keys, 10);

    assertThat(checked).containsExactly(Key.of(1L), Key.of(2L), Key.of(3L), Key.of(4L));
    assertThat(checked.get(0)).isSameAs(keys.get(0));
    assertThat(checked).allSatisfy(key -> assertThat(key.get(0)).isInstanceOf(Long.class));
  }

  @Test
  @SuppressWarnings("JdkObsolete") // a list without indexed access is the case under test
  void keysInAListWithoutIndexedAccessAreCheckedIntoOneWithIt() {
    List<Key> keys = new LinkedList<>(List.of(Key.of(1L), Key.of(2L)));

    List<Key> checked = PlanningActivitiesImpl.checked(BIGINT_KEYED, null, keys, 10);

    assertThat(checked).isInstanceOf(RandomAccess.class).containsExactlyElementsOf(keys);
  }

  @Test
  void keysOutOfOrderRepeatedOrOfAnotherTypeFailPlanningForGood() {
    assertPermanent(
        List.of(Key.of(1L), Key.of(3L), Key.of(2L)),
        "returned key 2 after 3; keys must be strictly ascending and after the cursor");
    assertPermanent(
        List.of(Key.of(1L), Key.of(1L)),
        "returned key 1 after 1; keys must be strictly ascending and after the cursor");
    assertPermanent(
        List.of(Key.of(1L), Key.of("2")), "returned key \"2\" that does not fit its key");
  }

  private static void assertPermanent(List<Key> keys, String problem) {
    assertThatThrownBy(() -> PlanningActivitiesImpl.checked(BIGINT_KEYED, null, keys, 10))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.PLANNING_PERMANENT.name());
              assertThat(failure.isNonRetryable()).isTrue();
              assertThat(failure.getOriginalMessage())
                  .startsWith("keysAfter of backfill test.planning-keys " + problem);
            });
  }

  /** What a definition must say of itself that these tests do not use. */
  private interface Fixture extends BackfillDefinition {
    @Override
    default String description() {
      return "keys for the test";
    }

    @Override
    default List<OptionSpec> options() {
      return List.of();
    }

    @Override
    default int defaultBatchSize() {
      return 10;
    }
  }

  /** A {@code long} definition over keys 1..{@code items}. */
  private record Longs(long items) implements LongKeyBackfillDefinition, Fixture {
    @Override
    public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
      long from = afterKey == null ? 1 : afterKey + 1;
      return LongStream.rangeClosed(from, items).limit(limit).boxed().toList();
    }

    @Override
    public void processBatch(BackfillContext context, KeyRange range) {}

    @Override
    public String name() {
      return "test.planning-longs";
    }
  }

  /** A typed definition whose keys the tests hand to the check themselves. */
  private record Typed(KeySchema key) implements KeyedBackfillDefinition, Fixture {
    @Override
    public List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) {
      return List.of();
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span) {}

    @Override
    public String name() {
      return "test.planning-keys";
    }
  }
}
