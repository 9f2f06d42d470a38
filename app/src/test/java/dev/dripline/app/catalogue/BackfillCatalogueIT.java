package dev.dripline.app.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.app.TestData;
import dev.dripline.store.db.Database;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(transactional = false)
class BackfillCatalogueIT {
  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  private Api api;
  private TestData data;
  private final String capped = TestData.uniqueName();
  private final String uncapped = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    api = new Api(client, json);
    data = new TestData(database);
    data.definition(capped, 25, 4);
    data.definition(uncapped, 100, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(capped, uncapped);
  }

  @Test
  void listsPublishedDefinitionsWithSchemaAndCaps() {
    Api.Reply reply = api.get("/api/backfills");

    assertThat(reply.status()).isEqualTo(200);
    Map<String, Object> first = byName(reply.list(), capped);
    assertThat(first)
        .containsEntry("description", "a test definition")
        .containsEntry("defaultBatchSize", 25)
        .containsEntry("maxParallelBatches", 4);
    Map<String, Object> second = byName(reply.list(), uncapped);
    assertThat(second).containsEntry("defaultBatchSize", 100).containsKey("maxParallelBatches");
    assertThat(second.get("maxParallelBatches")).isNull();
  }

  @Test
  void optionTypesAreListedByTheirWireNames() {
    Api.Reply reply = api.get("/api/backfills");

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> options =
        (List<Map<String, Object>>) byName(reply.list(), capped).get("options");
    assertThat(options)
        .extracting(o -> o.get("name"), o -> o.get("type"))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("items", "integer"),
            org.assertj.core.groups.Tuple.tuple("sleepMs", "integer"),
            org.assertj.core.groups.Tuple.tuple("faultTag", "string"),
            org.assertj.core.groups.Tuple.tuple("mode", "enum"),
            org.assertj.core.groups.Tuple.tuple("from", "date"),
            org.assertj.core.groups.Tuple.tuple("to", "date"));
    assertThat(options.get(0)).containsEntry("required", true).containsEntry("min", 0);
    assertThat(options.get(3)).containsEntry("allowedValues", List.of("fast", "slow"));
    assertThat(options.get(5)).containsEntry("notBefore", "from");
  }

  private static Map<String, Object> byName(List<Map<String, Object>> list, String name) {
    return list.stream()
        .filter(entry -> name.equals(entry.get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError(name + " not listed in " + list));
  }
}
