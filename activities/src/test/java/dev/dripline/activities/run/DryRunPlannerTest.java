package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunRequest;
import dev.dripline.workflows.run.DriplineFailure;
import io.micronaut.serde.ObjectMapper;
import io.temporal.failure.ApplicationFailure;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** How a dry run plans a definition, without a database: as planning would, saving nothing. */
class DryRunPlannerTest {
  private static final Listed ORDERED =
      new Listed("test.dry-run-ordered", LongStream.rangeClosed(1, 25).boxed().toList());
  private static final Listed UNORDERED = new Listed("test.dry-run-unordered", List.of(1L, 3L, 2L));
  private static final Listed REPEATED = new Listed("test.dry-run-repeated", List.of(1L, 1L));

  private final BackfillRegistry registry =
      new BackfillRegistry(List.of(ORDERED, UNORDERED, REPEATED));
  private final DryRunPlanner planner =
      new DryRunPlanner(registry, new RunOptionsReader(ObjectMapper.getDefault()));

  private static DryRunRequest request(String backfill) {
    return new DryRunRequest(backfill, "{}", 10, null, 1_000_000);
  }

  @Test
  void keysAreCountedAndCutAsPlanningCutsThem() {
    DryRunAnswer answer = planner.plan(request(ORDERED.name()));

    assertThat(answer.error()).isNull();
    assertThat(answer.totalKeys()).isEqualTo(25);
    assertThat(answer.totalKeysExact()).isTrue();
    assertThat(answer.batches()).isEqualTo(3);
    assertThat(answer.firstKey()).isEqualTo(1L);
    assertThat(answer.lastKey()).isEqualTo(25L);
    assertThat(answer.sampleBatches())
        .containsExactly(
            new DryRunAnswer.SampleBatch(1L, 10L, 10),
            new DryRunAnswer.SampleBatch(11L, 20L, 10),
            new DryRunAnswer.SampleBatch(21L, 25L, 5));
  }

  @Test
  void keysOutOfOrderOrRepeatedAreRefusedAsPlanningRefusesThem() {
    for (Listed definition : List.of(UNORDERED, REPEATED)) {
      String planningRefusal = planningRefusal(definition);

      DryRunAnswer answer = planner.plan(request(definition.name()));

      assertThat(planningRefusal)
          .startsWith("keysAfter of backfill " + definition.name() + " returned key ")
          .endsWith("; keys must be strictly ascending and after the cursor");
      assertThat(answer.error()).as(definition.name()).isEqualTo(planningRefusal);
      assertThat(answer.totalKeys()).isZero();
      assertThat(answer.sampleBatches()).isEmpty();
    }
  }

  @Test
  void aWorkerThatDoesNotHostTheDefinitionFailsTheAttemptForAnotherToTake() {
    DryRunActivitiesImpl activities = new DryRunActivitiesImpl(planner);

    assertThatThrownBy(() -> activities.plan(request("test.hosted-elsewhere")))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo(DriplineFailure.UNKNOWN_BACKFILL.name());
              assertThat(failure.isNonRetryable()).isFalse();
            });
  }

  /** What planning a run of {@code definition} fails with: its first page's check. */
  private String planningRefusal(Listed definition) {
    List<Key> keys = definition.keys().stream().map(Key::ofLong).toList();
    try {
      PlanningActivitiesImpl.checked(registry.require(definition.name()), null, keys, 100_000);
    } catch (ApplicationFailure failure) {
      assertThat(failure.getType()).isEqualTo(DriplineFailure.PLANNING_PERMANENT.name());
      return failure.getOriginalMessage();
    }
    throw new AssertionError("planning accepted the keys of " + definition.name());
  }

  /** A {@code long} definition that lists {@code keys}, whatever it is asked for. */
  private record Listed(String name, List<Long> keys) implements LongKeyBackfillDefinition {
    @Override
    public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
      return afterKey == null ? keys : List.of();
    }

    @Override
    public void processBatch(BackfillContext context, KeyRange range) {}

    @Override
    public String description() {
      return "keys for the test";
    }

    @Override
    public List<OptionSpec> options() {
      return List.of();
    }

    @Override
    public int defaultBatchSize() {
      return 10;
    }
  }
}
