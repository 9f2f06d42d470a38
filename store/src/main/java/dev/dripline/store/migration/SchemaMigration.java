package dev.dripline.store.migration;

import dev.dripline.store.db.DatabaseOutage;
import io.micronaut.context.event.BeanCreatedEvent;
import io.micronaut.context.event.BeanCreatedEventListener;
import io.micronaut.core.naming.NameResolver;
import io.micronaut.flyway.FlywayConfigurationProperties;
import io.micronaut.flyway.FlywayMigrator;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Set;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings Dripline's schema to this release's version when the default {@link DataSource} is
 * created, before any bean can use it (the moment Micronaut Flyway's own runner would, which {@code
 * flyway.datasources.default.enabled: false} turns off).
 *
 * <p>With {@link MigrationConfig#onStart()} (the default) the process migrates, and keeps trying
 * while a migration fails for a reason that passes: a lock timeout (SQLState 55P03), a deadlock
 * (40P01) or a lost connection ({@link DatabaseOutage}). Each such failure rolled the migration
 * back; it is logged and the migration tried again after a delay that doubles up to {@link
 * MigrationConfig#retryMaxInterval()}, without limit, so a release started beside a busy one waits
 * for its migration instead of exiting. Any other failure (a migration's SQL is wrong) fails the
 * start-up at once. How the migrations take their locks: {@link MigrationLocking}. Between the
 * migrations of the release before the contract of typed keys and the contract's own, the process
 * fills the key bytes of older rows ({@link TypedKeysFill}).
 *
 * <p>Without it (a deployment that runs {@link Migrate} once per deploy) the process runs no
 * migration: it waits, up to {@link MigrationConfig#schemaWait()}, until no migration of this
 * release is pending, and then fails to start with a message that says what to run.
 */
@Singleton
final class SchemaMigration implements BeanCreatedEventListener<DataSource> {
  static final String DATA_SOURCE = "default";

  private static final Logger LOG = LoggerFactory.getLogger(SchemaMigration.class);
  private static final Set<String> PASSING_STATES = Set.of("55P03", "40P01");
  private static final int MAX_CAUSES = 32;

  private final FlywayMigrator migrator;
  private final FlywayConfigurationProperties flyway;
  private final MigrationConfig config;

  SchemaMigration(
      FlywayMigrator migrator,
      @Named(DATA_SOURCE) FlywayConfigurationProperties flyway,
      MigrationConfig config) {
    this.migrator = migrator;
    this.flyway = flyway;
    this.config = config;
  }

  @Override
  public DataSource onCreated(BeanCreatedEvent<DataSource> event) {
    DataSource dataSource = event.getBean();
    if (event.getBeanDefinition() instanceof NameResolver name
        && name.resolveName().filter(DATA_SOURCE::equals).isPresent()) {
      if (config.onStart()) {
        TypedKeysFill.migrate(
            dataSource,
            config,
            target ->
                untilDone(
                    () -> migrate(dataSource, target),
                    () -> FailedMigrations.forget(dataSource, flyway.getFluentConfiguration()),
                    config));
      } else {
        awaitSchema(dataSource);
      }
    }
    return dataSource;
  }

  /** Applies the pending migrations up to {@code target}, or all of them for null. */
  private void migrate(DataSource dataSource, MigrationVersion target) {
    if (target == null) {
      migrator.run(flyway, dataSource);
      return;
    }
    MigrationLocking.configure(
            new FluentConfiguration(SchemaMigration.class.getClassLoader())
                .configuration(flyway.getFluentConfiguration())
                .dataSource(dataSource)
                .target(target),
            config.lockTimeout())
        .load()
        .migrate();
  }

  /**
   * Runs {@code migration} until it succeeds, trying it again after each failure that {@linkplain
   * #passes passes} (after {@code beforeRetry}), with a delay doubling from {@link
   * MigrationConfig#retryInitialInterval()} up to {@link MigrationConfig#retryMaxInterval()};
   * rethrows any other failure.
   */
  static void untilDone(Runnable migration, Runnable beforeRetry, MigrationConfig config) {
    long delay = config.retryInitialInterval().toMillis();
    long maxDelay = Math.max(delay, config.retryMaxInterval().toMillis());
    for (int attempt = 1; ; attempt++) {
      try {
        migration.run();
        return;
      } catch (RuntimeException e) {
        if (!passes(e)) {
          throw e;
        }
        LOG.warn(
            "Migration attempt {} failed (SQLState {}); trying again in {} ms: {}",
            attempt,
            sqlState(e),
            delay,
            e.getMessage());
      }
      sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
      try {
        beforeRetry.run();
      } catch (RuntimeException e) {
        if (!passes(e)) {
          throw e;
        }
      }
    }
  }

  /**
   * Waits until no migration of this release is pending on {@code dataSource}; fails after {@link
   * MigrationConfig#schemaWait()}.
   */
  private void awaitSchema(DataSource dataSource) {
    long deadline = System.nanoTime() + config.schemaWait().toNanos();
    long delay = config.retryInitialInterval().toMillis();
    long maxDelay = Math.max(delay, config.retryMaxInterval().toMillis());
    while (true) {
      String behind;
      try {
        behind = behind(dataSource);
      } catch (RuntimeException e) {
        if (!passes(e)) {
          throw e;
        }
        behind = "unknown (" + e.getMessage() + ")";
      }
      if (behind == null) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "The schema is behind this release: "
                + behind
                + ". DRIPLINE_MIGRATE_ON_START is false and it did not catch up within "
                + config.schemaWait()
                + " (DRIPLINE_MIGRATION_SCHEMA_WAIT): run the migrate step (`migrate` role of"
                + " the image, docs/operations.md \"Migrations\") or set"
                + " DRIPLINE_MIGRATE_ON_START=true");
      }
      LOG.warn(
          "The schema is behind this release: {}. DRIPLINE_MIGRATE_ON_START is false: waiting"
              + " for the migrate step; checking again in {} ms",
          behind,
          delay);
      sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
    }
  }

  /** How the schema on {@code dataSource} is behind this release's migrations, or null. */
  private String behind(DataSource dataSource) {
    FluentConfiguration fluent =
        new FluentConfiguration(SchemaMigration.class.getClassLoader())
            .configuration(flyway.getFluentConfiguration())
            .dataSource(dataSource);
    MigrationInfoService info = fluent.load().info();
    MigrationInfo[] pending = info.pending();
    boolean failed = Arrays.stream(info.all()).anyMatch(m -> m.getState().isFailed());
    if (pending.length == 0 && !failed) {
      return null;
    }
    MigrationInfo current = info.current();
    String at = current == null || current.getVersion() == null ? "empty" : version(current);
    String needs = pending.length == 0 ? at : version(pending[pending.length - 1]);
    return "at version "
        + at
        + (failed ? " with a failed migration" : "")
        + ", this release needs "
        + needs
        + " ("
        + pending.length
        + " pending)";
  }

  private static String version(MigrationInfo migration) {
    return migration.getVersion().getVersion();
  }

  /** The latest version of Flyway's schema history, as {@link Flyway} sees it, or null. */
  static String currentVersion(Flyway flyway) {
    MigrationInfo current = flyway.info().current();
    return current == null || current.getVersion() == null ? null : version(current);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the schema", e);
    }
  }

  /** True when {@code failure} is a lock timeout, a deadlock or a lost connection. */
  static boolean passes(Throwable failure) {
    String state = sqlState(failure);
    return (state != null && PASSING_STATES.contains(state))
        || DatabaseOutage.isConnectionFailure(failure);
  }

  /** The SQLState of the first of {@code failure}'s causes that has one, or null. */
  static String sqlState(Throwable failure) {
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++) {
      if (cause instanceof SQLException sql && sql.getSQLState() != null) {
        return sql.getSQLState();
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return null;
  }
}
