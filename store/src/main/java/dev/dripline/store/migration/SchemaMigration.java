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
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Migrates Dripline's schema when the default {@link DataSource} is created, before any bean can
 * use it (the moment Micronaut Flyway's own runner would, which {@code
 * flyway.datasources.default.enabled: false} turns off), and keeps trying while a migration fails
 * for a reason that passes: a lock timeout (SQLState 55P03), a deadlock (40P01) or a lost
 * connection ({@link DatabaseOutage}). Each such failure rolled the migration back; it is logged
 * and the migration tried again after a delay that doubles up to {@link
 * MigrationConfig#retryMaxInterval()}, without limit, so a release started beside a busy one waits
 * for its migration instead of exiting. Any other failure (a migration's SQL is wrong) fails the
 * start-up at once. How the migrations take their locks: {@link MigrationLocking}.
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
      migrate(dataSource);
    }
    return dataSource;
  }

  private void migrate(DataSource dataSource) {
    long delay = config.retryInitialInterval().toMillis();
    long maxDelay = Math.max(delay, config.retryMaxInterval().toMillis());
    for (int attempt = 1; ; attempt++) {
      try {
        migrator.run(flyway, dataSource);
        return;
      } catch (RuntimeException e) {
        if (!passes(e)) {
          throw e;
        }
        LOG.warn(
            "Migration attempt {} failed (SQLState {}), rolled back; trying again in {} ms: {}",
            attempt,
            sqlState(e),
            delay,
            e.getMessage());
      }
      try {
        Thread.sleep(delay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting to migrate again", e);
      }
      delay = Math.min(delay * 2, maxDelay);
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
