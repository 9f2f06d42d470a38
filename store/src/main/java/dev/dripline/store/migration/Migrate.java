package dev.dripline.store.migration;

import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import io.micronaut.core.type.Argument;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code migrate} step: applies the pending migrations to Dripline's database and exits, 0 when
 * the schema is at this release's version, 1 when a migration failed, 2 when the configuration is
 * wrong. A deployment runs it once per deploy (the image's {@code migrate} role: an init job before
 * the app and the workers start), and starts the processes with {@code
 * DRIPLINE_MIGRATE_ON_START=false}.
 *
 * <p>It reads the processes' configuration ({@code application.yml}: {@code DRIPLINE_DB_URL},
 * {@code DRIPLINE_DB_USER}, {@code DRIPLINE_DB_PASSWORD}, {@code DRIPLINE_MIGRATION_*}, and {@code
 * flyway.datasources.default.locations}) but starts no bean: none of the app's or the worker's, no
 * Temporal client, no connection pool. Migrations take their locks as at start-up ({@link
 * MigrationLocking}) and are retried as there ({@link SchemaMigration#untilDone}); between the
 * migrations before the contract of typed keys and the contract's own it fills the key bytes of
 * older rows ({@link TypedKeysFill}).
 */
public final class Migrate {
  static final int MIGRATED = 0;
  static final int FAILED = 1;
  static final int MISCONFIGURED = 2;

  private static final Logger LOG = LoggerFactory.getLogger(Migrate.class);
  private static final String DEFAULT_LOCATION = "classpath:db/migration";

  private Migrate() {}

  public static void main(String[] args) {
    System.exit(run(Map.of()));
  }

  /**
   * Migrates the database the configuration names, with {@code properties} over it; returns the
   * exit code.
   */
  static int run(Map<String, Object> properties) {
    Environment environment =
        ApplicationContext.builder()
            .properties(properties)
            .deduceEnvironment(false)
            .build()
            .getEnvironment()
            .start();
    FluentConfiguration fluent;
    MigrationConfig config;
    try {
      config = config(environment);
      fluent =
          MigrationLocking.configure(
              Flyway.configure(Migrate.class.getClassLoader())
                  .dataSource(
                      environment.getRequiredProperty("datasources.default.url", String.class),
                      environment.getProperty("datasources.default.username", String.class, ""),
                      environment.getProperty("datasources.default.password", String.class, ""))
                  .locations(locations(environment)),
              config.lockTimeout());
    } catch (RuntimeException e) {
      LOG.error("migrate: the configuration is wrong: {}", e.getMessage());
      return MISCONFIGURED;
    } finally {
      environment.stop();
    }
    try {
      Flyway flyway = fluent.load();
      String before = SchemaMigration.currentVersion(flyway);
      int[] executed = new int[1];
      TypedKeysFill.migrate(
          fluent.getDataSource(),
          config,
          target ->
              SchemaMigration.untilDone(
                  () ->
                      executed[0] +=
                          (target == null ? flyway : upTo(fluent, target, config))
                              .migrate()
                              .migrationsExecuted,
                  () -> FailedMigrations.forget(fluent.getDataSource(), fluent),
                  config));
      LOG.info(
          "migrate: {} migration(s) applied; the schema was at version {}, is at {}",
          executed[0],
          before == null ? "none" : before,
          SchemaMigration.currentVersion(flyway));
      return MIGRATED;
    } catch (RuntimeException e) {
      LOG.error("migrate: a migration failed: {}", e.getMessage(), e);
      return FAILED;
    }
  }

  /** Flyway as {@code fluent} configures it, applying migrations up to {@code target} only. */
  private static Flyway upTo(
      FluentConfiguration fluent, MigrationVersion target, MigrationConfig config) {
    return MigrationLocking.configure(
            new FluentConfiguration(Migrate.class.getClassLoader())
                .configuration(fluent)
                .target(target),
            config.lockTimeout())
        .load();
  }

  private static MigrationConfig config(Environment environment) {
    MigrationConfig defaults =
        new MigrationConfig(
            Duration.ofSeconds(3),
            Duration.ofSeconds(1),
            Duration.ofSeconds(30),
            true,
            Duration.ofMinutes(10),
            5000);
    return new MigrationConfig(
        duration(environment, "lock-timeout", defaults.lockTimeout()),
        duration(environment, "retry-initial-interval", defaults.retryInitialInterval()),
        duration(environment, "retry-max-interval", defaults.retryMaxInterval()),
        true,
        defaults.schemaWait(),
        environment.getProperty(
            "dripline.migration.fill-chunk-rows", Integer.class, defaults.fillChunkRows()));
  }

  private static Duration duration(Environment environment, String name, Duration otherwise) {
    return environment.getProperty("dripline.migration." + name, Duration.class, otherwise);
  }

  private static String[] locations(Environment environment) {
    List<String> locations =
        environment
            .getProperty("flyway.datasources.default.locations", Argument.listOf(String.class))
            .orElse(List.of(DEFAULT_LOCATION));
    return locations.toArray(String[]::new);
  }
}
