package dev.dripline.activities.run;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.catalogue.OptionsValidator;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.store.db.Database;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Turns a run's stored {@code options} JSON into the {@link BackfillContext} a definition sees.
 *
 * <p>The options are checked again against the schema of the definition this worker hosts, so the
 * definition always gets typed values with defaults applied, even if the run was created against an
 * older catalogue. Options that no longer fit are a {@link PermanentBackfillException}: retrying
 * cannot make them fit.
 */
@Singleton
public class RunOptionsReader {
  private static final Argument<Map<String, Object>> OPTIONS =
      Argument.mapOf(String.class, Object.class);

  /** Contexts of recently seen runs: a run's options never change, and every batch reads them. */
  private static final int CACHED_RUNS = 256;

  private record Key(long runId, String backfill, String optionsJson, String pool) {}

  private final ObjectMapper objectMapper;
  private final DataSource dataSource;

  /** Evicts on the calling thread, not in the shared ForkJoinPool: removing an entry is cheap. */
  private final Cache<Key, BackfillContext> recent =
      Caffeine.newBuilder().maximumSize(CACHED_RUNS).executor(Runnable::run).build();

  /** Contexts that give definitions {@code database}'s data source (spec: their own statements). */
  @Inject
  public RunOptionsReader(ObjectMapper objectMapper, Database database) {
    this.objectMapper = objectMapper;
    this.dataSource = database.dataSource();
  }

  /** Contexts without a database. */
  public RunOptionsReader(ObjectMapper objectMapper) {
    this.objectMapper = objectMapper;
    this.dataSource = null;
  }

  /**
   * The context of a batch of run {@code runId}; parsed and validated once per run (and options
   * text) for as long as the run is among the {@value #CACHED_RUNS} kept, which Caffeine picks by
   * how recently and how often they are read.
   *
   * @param pool the run's pool, null if it draws from none
   * @throws PermanentBackfillException if the options are not JSON or do not fit the definition
   */
  public BackfillContext context(
      long runId, BackfillDefinition definition, String optionsJson, String pool) {
    return recent.get(
        new Key(runId, definition.name(), optionsJson, pool),
        key -> parse(runId, definition, optionsJson, pool));
  }

  /** {@link #context(long, BackfillDefinition, String, String)} of a run without a pool. */
  public BackfillContext context(long runId, BackfillDefinition definition, String optionsJson) {
    return context(runId, definition, optionsJson, null);
  }

  private BackfillContext parse(
      long runId, BackfillDefinition definition, String optionsJson, String pool) {
    Map<String, Object> raw;
    try {
      raw = optionsJson == null ? Map.of() : objectMapper.readValue(optionsJson, OPTIONS);
    } catch (IOException e) {
      throw new PermanentBackfillException("options of run " + runId + " are not valid JSON", e);
    }
    ValidatedOptions validated = OptionsValidator.validate(definition.options(), raw, "");
    if (!validated.isValid()) {
      throw new PermanentBackfillException(
          "options of run "
              + runId
              + " do not fit backfill "
              + definition.name()
              + ": "
              + validated.errors().stream()
                  .map(e -> e.field() + " " + e.message())
                  .collect(Collectors.joining("; ")));
    }
    return new BackfillContext(
        runId, definition.name(), new BackfillOptions(validated.asMap()), pool, dataSource);
  }
}
