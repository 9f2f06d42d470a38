package dev.dripline.examples;

import static dev.dripline.examples.TestData.queryLong;
import static dev.dripline.examples.TestData.uniqueTag;
import static dev.dripline.examples.TestData.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.store.db.Database;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

@MicronautTest(startApplication = false, transactional = false)
class ExampleSeederIT {
  @Inject DataSource dataSource;
  @Inject Database database;

  @Test
  void parsesTheCommandLine() throws Exception {
    assertThat(ExampleSeeder.Request.parse("--users", "10", "--events", "5", "--tenants", "a, b"))
        .isEqualTo(new ExampleSeeder.Request(10L, 5L, List.of("a", "b")));
    assertThatThrownBy(() -> ExampleSeeder.Request.parse("--events", "5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--tenants");
    assertThatThrownBy(() -> ExampleSeeder.Request.parse("--users", "-1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ExampleSeeder.Request.parse())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void seedingTwiceAddsOnlyWhatIsMissing() throws Exception {
    String a = uniqueTag("seed-a");
    String b = uniqueTag("seed-b");
    long users = queryLong(database, "select count(*) from example_users") + 25;
    ExampleSeeder.Request request = new ExampleSeeder.Request(users, 50L, List.of(a, b));
    try (Connection connection = dataSource.getConnection()) {
      ExampleSeeder seeder = new ExampleSeeder(connection);

      List<String> first = seeder.seed(request);
      List<String> second = seeder.seed(request);

      assertThat(first)
          .containsExactly(
              "example_users: inserted 25 rows (at least " + users + ")",
              "example_events: inserted 100 rows (event ids 1..50 for tenants "
                  + a
                  + ","
                  + b
                  + ")");
      assertThat(second).allSatisfy(line -> assertThat(line).contains("inserted 0 rows"));
      assertThat(queryLong(database, "select count(*) from example_users")).isEqualTo(users);
      assertThat(
              queryLong(
                  database,
                  "select count(*) from example_users"
                      + " where id > (select max(id) - 25 from example_users)"
                      + " and email <> lower(trim(email))"))
          .isGreaterThan(20);
      assertThat(
              queryLong(
                  database,
                  "select count(distinct event_id) from example_events where tenant = ?"
                      + " and event_id between 1 and 50",
                  b))
          .isEqualTo(50);
    } finally {
      update(database, "delete from example_events where tenant in (?, ?)", a, b);
    }
  }

  @Test
  void failsClearlyWhenTheSchemaIsMissing() throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try (Statement statement = connection.createStatement()) {
        // An empty schema first on the search path hides the real tables for this transaction.
        statement.execute("create schema if not exists seeder_empty");
        statement.execute("set local search_path = seeder_empty");
      }
      try {
        assertThatThrownBy(
                () ->
                    new ExampleSeeder(connection).seed(ExampleSeeder.Request.parse("--users", "1")))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("start Dripline");
      } finally {
        connection.rollback();
        connection.setAutoCommit(true);
      }
    }
  }
}
