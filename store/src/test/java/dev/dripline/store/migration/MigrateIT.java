package dev.dripline.store.migration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code migrate} step ({@link Migrate}) on a database of its own ({@code <test
 * database>_migrate}, dropped and created per test) at V12: its exit codes, the schema it leaves,
 * and a concurrent index build that times out on a lock and is tried again.
 */
class MigrateIT {
  private static final Duration BOUND = Duration.ofSeconds(90);

  private final RecordedLog warnings = new RecordedLog(SchemaMigration.class, Level.WARN);
  private ScratchDatabase db;

  @BeforeEach
  void freshDatabaseAtV12() throws SQLException {
    db = ScratchDatabase.atVersion("migrate", "12");
    warnings.attach();
  }

  @AfterEach
  void detach() {
    warnings.detach();
  }

  @Test
  void appliesEveryPendingMigrationExitsZeroAndThenFindsNothingToDo() {
    assertThat(Migrate.run(settings(Map.of()))).isEqualTo(Migrate.MIGRATED);
    assertThat(db.schemaVersion()).isEqualTo(SchemaMigrationIT.LATEST_VERSION);
    long applied = db.count("select count(*) from flyway_schema_history");

    assertThat(Migrate.run(settings(Map.of()))).isEqualTo(Migrate.MIGRATED);
    assertThat(db.count("select count(*) from flyway_schema_history")).isEqualTo(applied);
    assertThat(warnings.lines()).isEmpty();
  }

  @Test
  void aMigrationThatFailsExitsOneAndLeavesTheMigrationsBeforeIt() {
    int exit =
        Migrate.run(
            settings(
                Map.of(
                    "flyway.datasources.default.locations",
                    "classpath:db/migration,classpath:db/failing-migration")));

    assertThat(exit).isEqualTo(Migrate.FAILED);
    assertThat(db.schemaVersion()).isEqualTo(SchemaMigrationIT.LATEST_VERSION);
    assertThat(db.count("select count(*) from flyway_schema_history where version = '999'"))
        .isZero();
  }

  @Test
  void withoutADatabaseItExitsTwo() {
    Map<String, Object> settings = settings(Map.of());
    settings.remove("datasources.default.url");

    assertThat(Migrate.run(settings)).isEqualTo(Migrate.MISCONFIGURED);
    assertThat(db.schemaVersion()).isEqualTo("12");
  }

  @Test
  void asAProcessItExitsZeroOnceTheSchemaIsMigrated() throws Exception {
    Process process =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-Ddatasources.default.url=" + db.url,
                "-Ddatasources.default.username=" + ScratchDatabase.USER,
                "-Ddatasources.default.password=" + ScratchDatabase.PASSWORD,
                "-cp",
                System.getProperty("java.class.path"),
                Migrate.class.getName())
            .redirectErrorStream(true)
            .start();
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
              } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
              }
            });

    assertThat(process.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output.get()).isZero();
    assertThat(db.schemaVersion()).isEqualTo(SchemaMigrationIT.LATEST_VERSION);
  }

  /**
   * A concurrent index build waits for the transactions that write the table; one held open makes
   * it time out, which leaves an INVALID index and a failed entry in Flyway's history. The step
   * forgets the entry, the migration drops the half-built index, and it is tried until it passes.
   */
  @Test
  void aConcurrentIndexBuildThatTimesOutIsTriedAgainUntilItIsBuilt() throws Exception {
    assertThat(Migrate.run(settings(Map.of()))).isEqualTo(Migrate.MIGRATED);
    try (Connection engine = db.connect()) {
      engine.setAutoCommit(false);
      try (PreparedStatement s =
          engine.prepareStatement("update batches set attempts = attempts + 1 where false")) {
        s.executeUpdate();
      }
      CompletableFuture<Integer> exit =
          CompletableFuture.supplyAsync(
              () ->
                  Migrate.run(
                      settings(
                          Map.of(
                              "flyway.datasources.default.locations",
                              "classpath:db/migration,classpath:db/concurrent-migration",
                              "dripline.migration.lock-timeout",
                              "200ms",
                              "dripline.migration.retry-initial-interval",
                              "50ms",
                              "dripline.migration.retry-max-interval",
                              "200ms"))));
      await("the index build retried after lock timeouts")
          .atMost(BOUND)
          .until(() -> warnings.lines().size() >= 2);
      assertThat(exit).isNotDone();

      engine.commit();

      assertThat(exit.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Migrate.MIGRATED);
    }
    assertThat(db.schemaVersion()).isEqualTo("900");
    assertThat(db.count("select count(*) from flyway_schema_history where not success")).isZero();
    assertThat(
            db.count(
                "select count(*) from pg_index where indisvalid"
                    + " and indexrelid = to_regclass('batches_attempts_test_idx')"))
        .isEqualTo(1);
    assertThat(warnings.lines()).allMatch(line -> line.contains("55P03"));
  }

  private Map<String, Object> settings(Map<String, Object> over) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("datasources.default.url", db.url);
    settings.put("datasources.default.username", ScratchDatabase.USER);
    settings.put("datasources.default.password", ScratchDatabase.PASSWORD);
    settings.put("dripline.migration.retry-initial-interval", "100ms");
    settings.put("dripline.migration.retry-max-interval", "1s");
    settings.putAll(over);
    return settings;
  }
}
