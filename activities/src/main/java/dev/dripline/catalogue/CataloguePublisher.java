package dev.dripline.catalogue;

import dev.dripline.db.Database;
import dev.dripline.registry.BackfillRegistry;
import dev.dripline.spi.BackfillDefinition;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the hosted backfill definitions to table {@code backfill_definitions}, which is all the
 * app knows of them (it never loads backfill code).
 *
 * <p>Upserts only: a definition hosted by another worker deployment stays published, so workers
 * hosting different sets of definitions can share one database.
 */
@Singleton
public class CataloguePublisher {
  private static final Logger LOG = LoggerFactory.getLogger(CataloguePublisher.class);

  private final Database database;
  private final BackfillRegistry registry;
  private final OptionSchemaJson schemaJson;

  public CataloguePublisher(
      Database database, BackfillRegistry registry, OptionSchemaJson schemaJson) {
    this.database = database;
    this.registry = registry;
    this.schemaJson = schemaJson;
  }

  /** Upserts every hosted definition in one transaction; returns how many were published. */
  public int publish() {
    int published =
        database.inTransaction(
            connection -> {
              try (PreparedStatement upsert =
                  connection.prepareStatement(
                      "insert into backfill_definitions (name, description, options_schema,"
                          + " default_batch_size, max_parallel_batches, published_at)"
                          + " values (?, ?, ?::jsonb, ?, ?, now())"
                          + " on conflict (name) do update set"
                          + " description = excluded.description,"
                          + " options_schema = excluded.options_schema,"
                          + " default_batch_size = excluded.default_batch_size,"
                          + " max_parallel_batches = excluded.max_parallel_batches,"
                          + " published_at = excluded.published_at")) {
                for (BackfillDefinition definition : registry.all()) {
                  upsert.setString(1, definition.name());
                  upsert.setString(2, definition.description());
                  upsert.setString(3, schemaJson.write(definition.options()));
                  upsert.setInt(4, definition.defaultBatchSize());
                  if (definition.maxParallelBatches() == null) {
                    upsert.setNull(5, Types.INTEGER);
                  } else {
                    upsert.setInt(5, definition.maxParallelBatches());
                  }
                  upsert.addBatch();
                }
                return upsert.executeBatch().length;
              }
            });
    LOG.info("Published {} backfill definitions to the catalogue", published);
    return published;
  }
}
