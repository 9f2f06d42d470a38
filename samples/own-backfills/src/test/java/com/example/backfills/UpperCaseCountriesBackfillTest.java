package com.example.backfills;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.TableBatch;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The definition against a real PostgreSQL: {@code DRIPLINE_TEST_DB_URL}, {@code _USER} and {@code
 * _PASSWORD} (Dripline's test suite sets them), else the local stack's {@code dripline_test}. Its
 * table is a temporary one, so the test leaves nothing behind.
 */
class UpperCaseCountriesBackfillTest {
  private final UpperCaseCountriesBackfill definition = new UpperCaseCountriesBackfill();
  private Connection connection;

  @BeforeEach
  void connect() throws SQLException {
    connection =
        DriverManager.getConnection(
            env("DRIPLINE_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/dripline_test"),
            env("DRIPLINE_TEST_DB_USER", "dripline"),
            env("DRIPLINE_TEST_DB_PASSWORD", "dripline"));
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "create temporary table sample_customers (id bigint primary key, country text not null)");
      statement.execute(
          "insert into sample_customers values"
              + " (1, ' de'), (2, 'FR'), (3, 'us '), (4, 'gb'), (5, 'nl'), (6, 'it')");
    }
  }

  @AfterEach
  void close() throws SQLException {
    connection.close();
  }

  @Test
  void upperCasesTheCountriesOfItsBatchAndNoOthers() throws Exception {
    definition.processBatch(context(), batch(2, 5), connection);

    assertEquals(List.of(" de", "FR", "US", "GB", "NL", "it"), countries());
  }

  @Test
  void aBatchRunTwiceChangesNothingTheSecondTime() throws Exception {
    definition.processBatch(context(), batch(1, 6), connection);
    List<String> once = countries();

    definition.processBatch(context(), batch(1, 6), connection);

    assertEquals(List.of("DE", "FR", "US", "GB", "NL", "IT"), once);
    assertEquals(once, countries());
  }

  @Test
  void theWorkerFindsItThroughItsServiceFile() {
    List<String> names = new ArrayList<>();
    ServiceLoader.load(BackfillDefinition.class).forEach(found -> names.add(found.name()));

    assertTrue(names.contains(UpperCaseCountriesBackfill.NAME), names.toString());
  }

  private TableBatch batch(long first, long last) {
    return new TableBatch(
        definition.key(),
        new KeySpan(Key.ofLong(first), Key.ofLong(last)),
        definition.scope(null));
  }

  private static BackfillContext context() {
    return new BackfillContext(1, UpperCaseCountriesBackfill.NAME, null);
  }

  private List<String> countries() throws SQLException {
    List<String> countries = new ArrayList<>();
    try (Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("select country from sample_customers order by id")) {
      while (rows.next()) {
        countries.add(rows.getString(1));
      }
    }
    return countries;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? fallback : value;
  }
}
