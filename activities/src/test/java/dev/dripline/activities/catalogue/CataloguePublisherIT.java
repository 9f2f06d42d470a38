package dev.dripline.activities.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.activities.testing.LiveBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.activities.testing.TupleRowsBackfill;
import dev.dripline.spi.OptionSpec;
import dev.dripline.store.catalogue.CatalogueEntry;
import dev.dripline.store.catalogue.CatalogueRepository;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class CataloguePublisherIT {
  @Inject CataloguePublisher publisher;
  @Inject RunFixtures fixtures;
  @Inject ObjectMapper objectMapper;
  @Inject KeysBackfill keysBackfill;
  @Inject CatalogueRepository catalogue;

  @Test
  void publishesEveryDefinitionAndRepublishesIdempotently() throws Exception {
    fixtures.update(
        "update backfill_definitions set description = 'stale' where name = ?", KeysBackfill.NAME);

    publisher.publish();
    publisher.publish();

    Map<String, Object> row =
        fixtures.row(
            "select description, options_schema::text as schema, default_batch_size,"
                + " max_parallel_batches, published_at from backfill_definitions where name = ?",
            KeysBackfill.NAME);
    assertThat(row)
        .containsEntry("description", "Keys 1..items, for tests.")
        .containsEntry("default_batch_size", 10)
        .containsEntry("max_parallel_batches", 7);
    assertThat(row.get("published_at")).isNotNull();

    // The app reads the column with the same mapper and argument.
    List<OptionSpec> schema =
        objectMapper.readValue((String) row.get("schema"), Argument.listOf(OptionSpec.class));
    assertThat(schema).isEqualTo(keysBackfill.options());
  }

  @Test
  void publishesADefinitionsBatchSizeTuningAndNullsForOneWithout() {
    publisher.publish();

    assertThat(
            fixtures.row(
                "select target_batch_millis, min_batch_size, max_batch_size"
                    + " from backfill_definitions where name = ?",
                LiveBackfill.NAME))
        .containsEntry("target_batch_millis", 1_000L)
        .containsEntry("min_batch_size", 20)
        .containsEntry("max_batch_size", null);
    assertThat(
            fixtures.row(
                "select target_batch_millis, min_batch_size, max_batch_size"
                    + " from backfill_definitions where name = ?",
                KeysBackfill.NAME))
        .containsEntry("target_batch_millis", null)
        .containsEntry("min_batch_size", null)
        .containsEntry("max_batch_size", null);
  }

  @Test
  void schemaJsonUsesRecordFieldNamesAndWireTypes() throws Exception {
    publisher.publish();
    String json =
        (String)
            fixtures
                .row(
                    "select options_schema::text as schema from backfill_definitions where name = ?",
                    KeysBackfill.NAME)
                .get("schema");

    List<Map<String, Object>> raw =
        objectMapper.readValue(json, Argument.listOf(Argument.mapOf(String.class, Object.class)));

    assertThat(raw.get(0))
        .containsEntry("name", "items")
        .containsEntry("type", "integer")
        .containsEntry("required", true)
        .containsEntry("min", 0)
        .containsEntry("description", "how many keys");
    assertThat(raw.get(3)).containsEntry("type", "string").containsEntry("defaultValue", "none");
  }

  @Test
  void publishesTheTablesADefinitionDeclares() {
    fixtures.update(
        "update backfill_definitions set tables = '{stale}' where name = ?", KeysBackfill.NAME);

    publisher.publish();

    assertThat(catalogue.declaredTables(new String[] {TupleRowsBackfill.NAME}))
        .as("a table definition declares its table")
        .containsExactly("test_tuple_rows");
    assertThat(catalogue.declaredTables(new String[] {KeysBackfill.NAME}))
        .as("republished: declares none")
        .isEmpty();
    assertThat(catalogue.declaredTables(new String[0]))
        .as("every definition's")
        .contains("test_tuple_rows")
        .doesNotContain("stale");
  }

  /** A table definition publishes the table its keys come from; no other definition has one. */
  @Test
  void publishesATableDefinitionsKeyTable() {
    publisher.publish();

    assertThat(catalogue.findByName(TupleRowsBackfill.NAME))
        .get()
        .extracting(CatalogueEntry::keyTable)
        .isEqualTo("test_tuple_rows");
    assertThat(catalogue.findByName(KeysBackfill.NAME))
        .get()
        .extracting(CatalogueEntry::keyTable)
        .isNull();
  }
}
