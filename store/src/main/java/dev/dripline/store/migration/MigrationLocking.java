package dev.dripline.store.migration;

import io.micronaut.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * Flyway's configuration of the default data source, as Micronaut Flyway builds it from {@code
 * flyway.datasources.default}, plus how its migrations take locks: {@code lock_timeout} on every
 * connection Flyway opens ({@code initSql}) and {@link EngineLockOrder}. Being this data source's
 * customizer, it replaces Micronaut's default one, which only adds Java migrations and callbacks
 * declared as beans; Dripline declares none.
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
    fluent
        .initSql("set lock_timeout = " + config.lockTimeout().toMillis())
        .callbacks(new EngineLockOrder());
  }

  @Override
  public String getName() {
    return SchemaMigration.DATA_SOURCE;
  }
}
