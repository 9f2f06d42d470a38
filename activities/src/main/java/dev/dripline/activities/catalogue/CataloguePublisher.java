package dev.dripline.activities.catalogue;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.store.catalogue.CatalogueRepository;
import dev.dripline.store.run.BatchTuning;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
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

  private final CatalogueRepository catalogue;
  private final BackfillRegistry registry;
  private final OptionSchemaJson schemaJson;

  public CataloguePublisher(
      CatalogueRepository catalogue, BackfillRegistry registry, OptionSchemaJson schemaJson) {
    this.catalogue = catalogue;
    this.registry = registry;
    this.schemaJson = schemaJson;
  }

  /** Upserts every hosted definition in one transaction; returns how many were published. */
  @Transactional
  public int publish() {
    int published = 0;
    for (KeyedBackfill keyed : registry.all()) {
      BackfillDefinition definition = keyed.definition();
      catalogue.publish(
          definition.name(),
          definition.description(),
          schemaJson.write(definition.options()),
          definition.defaultBatchSize(),
          definition.maxParallelBatches(),
          schemaJson.writeKey(keyed.key()),
          definition.targetBatchDuration() == null
              ? null
              : BatchTuning.targetMillis(definition.targetBatchDuration()),
          definition.minBatchSize(),
          definition.maxBatchSize(),
          definition.maxFailedBatchesPercent(),
          definition.pool(),
          definition.tables().toArray(String[]::new),
          definition.niceRatio(),
          definition instanceof TableBackfillDefinition table ? table.table() : null);
      published++;
    }
    LOG.info("Published {} backfill definitions to the catalogue", published);
    return published;
  }
}
