package dev.dripline.store.migration;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.bind.annotation.Bindable;
import java.time.Duration;

/**
 * How the schema is migrated and how a migration meets the engine's traffic of a release still
 * running beside it ({@code SchemaMigration}, {@code Migrate}; docs/design.md, "Migrations and the
 * engine's locks").
 *
 * @param lockTimeout longest one statement of a migration waits for a lock, PostgreSQL's {@code
 *     lock_timeout} on Flyway's connections, {@code DRIPLINE_MIGRATION_LOCK_TIMEOUT}; what queues
 *     behind a waiting migration waits no longer
 * @param retryInitialInterval delay before a migration that failed on a lock timeout, a deadlock or
 *     a lost connection is tried again, {@code DRIPLINE_MIGRATION_RETRY_INITIAL_INTERVAL}
 * @param retryMaxInterval cap on that delay, which doubles per failure, {@code
 *     DRIPLINE_MIGRATION_RETRY_MAX_INTERVAL}
 * @param onStart whether a process migrates the schema when it starts, {@code
 *     DRIPLINE_MIGRATE_ON_START}; when false it runs no migration and waits for the {@code migrate}
 *     step to bring the schema to its version
 * @param schemaWait longest a process that does not migrate waits for its schema before it fails to
 *     start, {@code DRIPLINE_MIGRATION_SCHEMA_WAIT}
 * @param fillChunkRows rows of a table one transaction of the typed keys' fill walks ({@code
 *     TypedKeysFill}), {@code DRIPLINE_MIGRATION_FILL_CHUNK_ROWS}
 */
@ConfigurationProperties("dripline.migration")
public record MigrationConfig(
    @Bindable(defaultValue = "3s") Duration lockTimeout,
    @Bindable(defaultValue = "1s") Duration retryInitialInterval,
    @Bindable(defaultValue = "30s") Duration retryMaxInterval,
    @Bindable(defaultValue = "true") boolean onStart,
    @Bindable(defaultValue = "10m") Duration schemaWait,
    @Bindable(defaultValue = "5000") int fillChunkRows) {}
