package dev.dripline.store.catalogue;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;
import java.util.Optional;

/** Table {@code backfill_definitions}: workers publish to it, the app reads it. */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface CatalogueRepository extends GenericRepository<CatalogueEntry, String> {

  /** Every published definition, by name. */
  List<CatalogueEntry> findAllOrderByName();

  /** The definition named {@code name}, if a worker published it. */
  Optional<CatalogueEntry> findByName(String name);

  /**
   * Publishes a definition: inserted, or its published fields replaced (its batch-size tuning, P4,
   * the tables it declares, P1, its pace, {@code nice_ratio}, and its key table included). Upserts
   * only, so a definition hosted by another worker deployment stays published.
   */
  @Query(
      "insert into backfill_definitions (name, description, options_schema, default_batch_size,"
          + " max_parallel_batches, key, target_batch_millis, min_batch_size, max_batch_size,"
          + " max_failed_batches_percent, pool, tables, nice_ratio, key_table, published_at)"
          + " values (:name, :description, cast(:optionsSchema as jsonb), :defaultBatchSize,"
          + " :maxParallelBatches, cast(:key as jsonb), :targetBatchMillis, :minBatchSize,"
          + " :maxBatchSize, :maxFailedBatchesPercent, :pool, cast(:tables as text[]), :niceRatio,"
          + " :keyTable, now())"
          + " on conflict (name) do update set description = excluded.description,"
          + " options_schema = excluded.options_schema,"
          + " default_batch_size = excluded.default_batch_size,"
          + " max_parallel_batches = excluded.max_parallel_batches, key = excluded.key,"
          + " target_batch_millis = excluded.target_batch_millis,"
          + " min_batch_size = excluded.min_batch_size, max_batch_size = excluded.max_batch_size,"
          + " max_failed_batches_percent = excluded.max_failed_batches_percent,"
          + " pool = excluded.pool, tables = excluded.tables, nice_ratio = excluded.nice_ratio,"
          + " key_table = excluded.key_table,"
          + " published_at = excluded.published_at")
  void publish(
      String name,
      String description,
      String optionsSchema,
      int defaultBatchSize,
      @Nullable Integer maxParallelBatches,
      String key,
      @Nullable Long targetBatchMillis,
      @Nullable Integer minBatchSize,
      @Nullable Integer maxBatchSize,
      @Nullable Double maxFailedBatchesPercent,
      @Nullable String pool,
      String[] tables,
      double niceRatio,
      @Nullable String keyTable);

  /**
   * The tables the definitions named {@code names} declare they write ({@code
   * BackfillDefinition.tables()}), each once, by name; every published definition's when {@code
   * names} is empty. Read by the {@code autovacuum} health check.
   */
  @Query(
      """
      select distinct t.name from backfill_definitions d, unnest(d.tables) as t(name)
      where cardinality(cast(:names as text[])) = 0 or d.name = any (cast(:names as text[]))
      order by t.name
      """)
  List<String> declaredTables(String[] names);
}
