package dev.dripline.store.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract step of typed keys in the {@code migrate} step ({@link TypedKeysFill}), on a
 * database of its own ({@code <test database>_fill}): rows as the release before typed keys left
 * them (bigint only), as the release before this one writes them (both), and a cursor whose bytes
 * lag behind its bigint, walked in chunks of a few rows.
 */
class TypedKeysFillIT {
  private static final int CHUNK_ROWS = 7;

  private final RecordedLog fills = new RecordedLog(TypedKeysFill.class, Level.INFO);
  private ScratchDatabase db;

  @BeforeEach
  void databaseAtTheReleaseBeforeTypedKeys() throws SQLException {
    db = ScratchDatabase.atVersion("fill", "12");
    // Runs 1 and 2 with 30 and 25 batches, as the release before typed keys planned them.
    execute(
        "insert into runs (id, backfill, options, options_key, batch_size, max_parallel_batches,"
            + " status, plan_cursor) values (1, 'example.sleep', '{}', '{\"r\":1}', 10, 3,"
            + " 'running', 300), (2, 'example.sleep', '{}', '{\"r\":2}', 10, 3, 'completed', 250),"
            + " (3, 'example.sleep', '{}', '{\"r\":3}', 10, 3, 'pending', null)",
        "insert into batches (run_id, number, start_key, end_key, size, status)"
            + " select 1, n, n * 10 - 9, n * 10, 10, case when n <= 20 then 'completed'"
            + " else 'pending' end from generate_series(1, 30) n",
        "insert into batches (run_id, number, start_key, end_key, size, status)"
            + " select 2, n, n * 10 - 9, n * 10, 10, 'completed' from generate_series(1, 25) n");
    Flyway.configure()
        .dataSource(db.url, ScratchDatabase.USER, ScratchDatabase.PASSWORD)
        .locations("classpath:db/migration")
        .target(TypedKeysFill.EXPANDED)
        .load()
        .migrate();
    // Run 3 planned by the release before this one (both columns); run 1's cursor moved on by
    // the release before typed keys after the one before this had written its bytes.
    execute(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, start_key, end_key,"
            + " size, status) select 3, n, dripline_bigint_key(n), dripline_bigint_key(n), n, n,"
            + " 1, 'pending' from generate_series(1, 12) n",
        "update runs set plan_cursor = 12, plan_cursor_key = dripline_bigint_key(12),"
            + " status = 'running' where id = 3",
        "update runs set plan_cursor_key = dripline_bigint_key(200) where id = 1");
    fills.attach();
  }

  @AfterEach
  void detach() {
    fills.detach();
  }

  @Test
  void fillsEveryRowBeforeTheConstraintThenIsSkipped() throws SQLException {
    assertThat(Migrate.run(settings())).isEqualTo(Migrate.MIGRATED);

    assertThat(db.schemaVersion()).isEqualTo(SchemaMigrationIT.LATEST_VERSION);
    assertFilled();
    // 55 batch rows in chunks of 7 (10), 3 runs in 1; runs 1 and 2 needed their cursor's bytes.
    assertThat(fillsWithoutTime())
        .containsExactly(
            "Typed keys: filled the key bytes of 55 batches and 2 run cursors in 11 chunks");

    assertThat(Migrate.run(settings())).isEqualTo(Migrate.MIGRATED);
    assertThat(fillsWithoutTime())
        .last()
        .isEqualTo("Typed keys: nothing to fill (batches_key_bytes_present is validated)");
  }

  @Test
  void aFillStoppedHalfWayIsDoneByTheNextRun() throws SQLException {
    // What a fill killed after its first chunks left: some rows filled, their transactions
    // committed.
    execute(
        "update batches set start_key_bytes = dripline_bigint_key(start_key),"
            + " end_key_bytes = dripline_bigint_key(end_key) where run_id = 1 and number <= 17");

    assertThat(Migrate.run(settings())).isEqualTo(Migrate.MIGRATED);

    assertFilled();
    assertThat(fillsWithoutTime())
        .containsExactly(
            "Typed keys: filled the key bytes of 38 batches and 2 run cursors in 11 chunks");
  }

  private void assertFilled() throws SQLException {
    assertThat(db.count("select count(*) from batches")).isEqualTo(67);
    assertThat(
            db.count(
                "select count(*) from batches where start_key_bytes is distinct from"
                    + " dripline_bigint_key(start_key) or end_key_bytes is distinct from"
                    + " dripline_bigint_key(end_key)"))
        .isZero();
    assertThat(
            db.count(
                "select count(*) from runs where plan_cursor_key is distinct from"
                    + " dripline_bigint_key(plan_cursor)"))
        .isZero();
    assertThat(
            db.count(
                "select count(*) from pg_constraint where conname = 'batches_key_bytes_present'"
                    + " and convalidated"))
        .isEqualTo(1);
    assertThat(
            db.count(
                "select count(*) from pg_index where indisvalid"
                    + " and indexrelid = to_regclass('batches_run_key_bytes_idx')"))
        .isEqualTo(1);
    SQLException refused =
        catchThrowableOfType(
            SQLException.class,
            () ->
                execute(
                    "insert into batches (run_id, number, start_key, end_key, size, status)"
                        + " values (3, 13, 13, 13, 1, 'pending')"));
    assertThat(refused.getSQLState()).as("a batch without bytes").isEqualTo("23514");
  }

  private void execute(String... statements) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    }
  }

  private Map<String, Object> settings() {
    return Map.of(
        "datasources.default.url", db.url,
        "datasources.default.username", ScratchDatabase.USER,
        "datasources.default.password", ScratchDatabase.PASSWORD,
        "dripline.migration.fill-chunk-rows", CHUNK_ROWS);
  }

  /** What the fill logged, without its time. */
  private List<String> fillsWithoutTime() {
    return fills.lines().stream().map(line -> line.replaceFirst(", \\d+ ms$", "")).toList();
  }
}
