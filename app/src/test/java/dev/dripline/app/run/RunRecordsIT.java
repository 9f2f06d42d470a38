package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.TestData;
import dev.dripline.app.run.RunRecords.Insertion;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.run.RunStatus;
import io.micronaut.context.annotation.Property;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A run's insert over {@code RunRepository}: its id, workflow id and status, and the unique
 * violations it maps to an {@link Insertion}, including the idempotency key's, which the API meets
 * only when two requests race.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class RunRecordsIT {
  @Inject RunRecords runs;
  @Inject Database database;

  private TestData data;
  private final String backfill = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(backfill);
  }

  private NewRun run(String optionsJson, String idempotencyKey) {
    return run(optionsJson, idempotencyKey, null);
  }

  private NewRun run(String optionsJson, String idempotencyKey, Double niceRatio) {
    return new NewRun(
        backfill,
        optionsJson,
        10,
        null,
        null,
        4,
        null,
        "test",
        idempotencyKey,
        null,
        null,
        20,
        null,
        niceRatio);
  }

  @Test
  void insertedRunIsPendingWithItsWorkflowIdAndOptions() {
    Insertion insertion = runs.insert(run("{\"items\":5}", null));

    assertThat(insertion).isInstanceOf(Insertion.Inserted.class);
    long id = ((Insertion.Inserted) insertion).id();
    RunRow row = runs.find(id).orElseThrow();
    assertThat(row.status()).isEqualTo(RunStatus.PENDING);
    assertThat(row.workflowId()).isEqualTo("dripline-run-" + id);
    assertThat(((Number) row.options().get("items")).intValue()).isEqualTo(5);
    assertThat(data.text("select options_key from runs where id = ?", id))
        .isEqualTo("{\"items\":5}");
  }

  @Test
  void secondActiveRunWithTheSameValuesIsADuplicateActive() {
    long first = ((Insertion.Inserted) runs.insert(run("{\"items\":6}", null))).id();

    Insertion second = runs.insert(run("{\"items\":6}", null));

    assertThat(second).isInstanceOf(Insertion.DuplicateActive.class);
    assertThat(runs.findActiveDuplicate(backfill, "{\"items\":6}", null)).contains(first);
  }

  @Test
  void aRunIsPacedAtItsOwnNiceRatioElseItsDefinitionsElseNot() {
    long unpaced = ((Insertion.Inserted) runs.insert(run("{\"items\":1}", null))).id();
    data.sql("update backfill_definitions set nice_ratio = 0.5 where name = ?", backfill);
    long definitions = ((Insertion.Inserted) runs.insert(run("{\"items\":2}", null))).id();
    long own = ((Insertion.Inserted) runs.insert(run("{\"items\":3}", null, 2.0))).id();
    long off = ((Insertion.Inserted) runs.insert(run("{\"items\":4}", null, 0.0))).id();

    assertThat(runs.find(unpaced).orElseThrow().niceRatio()).isZero();
    assertThat(runs.find(definitions).orElseThrow().niceRatio()).isEqualTo(0.5);
    assertThat(runs.find(own).orElseThrow().niceRatio()).isEqualTo(2.0);
    assertThat(runs.find(off).orElseThrow().niceRatio()).isZero();
  }

  @Test
  void takenIdempotencyKeyIsADuplicateIdempotencyKey() {
    String key = TestData.uniqueName();
    long first = ((Insertion.Inserted) runs.insert(run("{\"items\":7}", key))).id();

    Insertion second = runs.insert(run("{\"items\":8}", key));

    assertThat(second).isInstanceOf(Insertion.DuplicateIdempotencyKey.class);
    assertThat(runs.findByIdempotencyKey(key).map(RunRow::id)).contains(first);
  }
}
