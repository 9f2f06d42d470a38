package dev.dripline.app.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import dev.dripline.store.db.Database;
import io.micronaut.context.annotation.Property;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code PUT /api/pools/{name}} and {@code GET /api/pools} (P5). */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class PoolsApiIT {
  private static final String POOL = "pools-api-it";

  @Inject
  @Client("/")
  HttpClient client;

  @Inject JsonMapper json;
  @Inject Database database;

  @AfterEach
  void tearDown() {
    database.inTransaction(
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement("delete from pools where name like ?")) {
            delete.setString(1, POOL + "%");
            return delete.executeUpdate();
          }
        });
  }

  private Api operator() {
    return new Api(client, json, Api.OPERATOR_TOKEN);
  }

  private Api viewer() {
    return new Api(client, json, Api.VIEWER_TOKEN);
  }

  @Test
  void anOperatorCreatesAPoolAndResizesIt() {
    Api.Reply created = operator().put("/api/pools/" + POOL, "{\"size\":3}");
    Api.Reply resized = operator().put("/api/pools/" + POOL, "{\"size\":5}");

    assertThat(created.status()).isEqualTo(200);
    assertThat(created.object())
        .containsEntry("name", POOL)
        .containsEntry("size", 3)
        .containsEntry("inUse", 0)
        .containsEntry("waiting", 0);
    assertThat(resized.status()).isEqualTo(200);
    assertThat(resized.object()).containsEntry("size", 5);
    assertThat(storedSize(POOL)).isEqualTo(5);
  }

  @Test
  void aViewerListsThePoolsWithWhatIsInUseAndWaiting() {
    operator().put("/api/pools/" + POOL + "-b", "{\"size\":2}");
    operator().put("/api/pools/" + POOL + "-a", "{\"size\":1}");

    Api.Reply listed = viewer().get("/api/pools");

    assertThat(listed.status()).isEqualTo(200);
    assertThat(
            listed.list().stream()
                .filter(pool -> ((String) pool.get("name")).startsWith(POOL))
                .toList())
        .containsExactly(
            Map.of("name", POOL + "-a", "size", 1, "inUse", 0, "waiting", 0),
            Map.of("name", POOL + "-b", "size", 2, "inUse", 0, "waiting", 0));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "size 0          | " + POOL + "     | {'size':0}      | size",
        "size negative   | " + POOL + "     | {'size':-2}     | size",
        "size missing    | " + POOL + "     | {}              | size",
        "size text       | " + POOL + "     | {'size':'two'}  | size",
        "size fraction   | " + POOL + "     | {'size':1.5}    | size",
        "unknown field   | " + POOL + "     | {'size':1,'x':1} | x",
        "bad name        | -" + POOL + "    | {'size':1}      | name",
      })
  void rejectsABadPoolAndWritesNothing(String name, String pool, String body, String field) {
    Api.Reply reply = operator().put("/api/pools/" + pool, body.replace('\'', '"'));

    assertThat(reply.status()).isEqualTo(400);
    assertThat(reply.contentType()).startsWith("application/problem+json");
    assertThat(reply.errorFields()).containsExactly(field);
    assertThat(storedSize(pool)).isNull();
  }

  private Integer storedSize(String name) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement("select size from pools where name = ?")) {
            select.setString(1, name);
            try (ResultSet row = select.executeQuery()) {
              return row.next() ? row.getInt(1) : null;
            }
          }
        });
  }
}
