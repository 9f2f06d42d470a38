package dev.dripline.store.db;

import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.event.BeanCreatedEvent;
import io.micronaut.context.event.BeanCreatedEventListener;
import io.micronaut.data.connection.jdbc.advice.ContextualAwareDataSource;
import jakarta.inject.Singleton;
import javax.sql.DataSource;

/**
 * Keeps the {@link DataSource} bean the plain connection pool. Micronaut Data JDBC would wrap it so
 * that {@code getConnection()} answers only inside {@code @Transactional} or {@code @Connectable}
 * code; backfill definitions (spi) and the engine's explicit transactions ({@link Database}) take
 * connections from it wherever they run, as from any pool. Repositories and {@code @Transactional}
 * methods are unaffected: Micronaut Data opens and binds their connections itself.
 */
@Singleton
@Replaces(ContextualAwareDataSource.class)
final class PlainDataSource implements BeanCreatedEventListener<DataSource> {
  @Override
  public DataSource onCreated(BeanCreatedEvent<DataSource> event) {
    return event.getBean();
  }
}
