package dev.dripline.store.migration;

import io.micronaut.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import java.time.Duration;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;

/**
 * Flyway's configuration of the default data source, as Micronaut Flyway builds it from {@code
 * flyway.datasources.default}, plus how its migrations take locks: {@code lock_timeout} on every
 * connection Flyway opens ({@code initSql}) and {@link EngineLockOrder}. Being this data source's
 * customizer, it replaces Micronaut's default one, which only adds Java migrations and callbacks
 * declared as beans; Dripline declares none. {@link Migrate} configures its Flyway the same way.
 */
@Singleton
@Named(SchemaMigration.DATA_SOURCE)
final class MigrationLocking implements FlywayConfigurationCustomizer {
  private final MigrationConfig config;

  MigrationLocking(MigrationConfig config) {
    this.config = config;
  }

  @Override
  public void customizeFluentConfiguration(FluentConfiguration fluent) {
    configure(fluent, config.lockTimeout());
  }

  /**
   * Sets {@code lock_timeout} on Flyway's connections, adds {@link EngineLockOrder}, and makes
   * Flyway hold its own lock (a PostgreSQL advisory lock serialising migrations) at the session's
   * level rather than in a transaction: an index built {@code CONCURRENTLY} waits for every
   * transaction older than its snapshot, Flyway's own included, so a transaction-scoped lock would
   * make every concurrent build time out.
   */
  static FluentConfiguration configure(FluentConfiguration fluent, Duration lockTimeout) {
    fluent
        .getPluginRegister()
        .getPlugin(PostgreSQLConfigurationExtension.class)
        .setTransactionalLock(false);
    return fluent
        .initSql("set lock_timeout = " + lockTimeout.toMillis())
        .callbacks(new EngineLockOrder());
  }

  @Override
  public String getName() {
    return SchemaMigration.DATA_SOURCE;
  }
}
