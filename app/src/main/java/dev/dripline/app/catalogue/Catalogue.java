package dev.dripline.app.catalogue;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeyJson;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.OptionSpec;
import dev.dripline.store.catalogue.CatalogueEntry;
import dev.dripline.store.catalogue.CatalogueRepository;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.catalogue.OptionsValidator;
import dev.dripline.store.catalogue.ValidatedOptions;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The catalogue of backfill definitions, read from PostgreSQL where workers publish it. The app
 * never loads backfill code, so this table is all it knows about definitions.
 */
@Singleton
public class Catalogue {
  private static final Argument<List<OptionSpec>> SCHEMA = Argument.listOf(OptionSpec.class);
  private static final Argument<List<KeyColumn>> KEY = Argument.listOf(KeyColumn.class);

  /**
   * The most a run's or target's options may take as canonical JSON. Runs index them ({@code
   * runs_one_active}), and a btree entry holds at most about 2.7 kB with the other columns.
   */
  static final int MAX_OPTIONS_BYTES = 2000;

  private final CatalogueRepository entries;
  private final JsonMapper json;

  public Catalogue(CatalogueRepository entries, JsonMapper json) {
    this.entries = entries;
    this.json = json;
  }

  /** Every published definition, by name. */
  public List<PublishedBackfill> all() {
    return entries.findAllOrderByName().stream().map(this::definition).toList();
  }

  /** The definition named {@code name}, if a worker has published it. */
  public Optional<PublishedBackfill> find(String name) {
    return entries.findByName(name).map(this::definition);
  }

  private PublishedBackfill definition(CatalogueEntry entry) {
    return new PublishedBackfill(
        entry.name(),
        entry.description(),
        schema(entry.name(), entry.optionsSchema()),
        entry.defaultBatchSize(),
        entry.maxParallelBatches(),
        key(entry.name(), entry.key()),
        entry.targetBatchMillis(),
        entry.minBatchSize(),
        entry.maxBatchSize(),
        entry.maxFailedBatchesPercent(),
        entry.pool(),
        entry.niceRatio(),
        entry.keyTable());
  }

  /**
   * {@code text}, a key as the API shows it (JSON: {@code 42}, {@code "0b6a…"}, {@code [1042, 3]};
   * a bare string that is no JSON is taken as a string), as a key of backfill {@code backfill}.
   *
   * @throws ValidationProblem with one error of field {@code key} when it is not one, or the
   *     backfill is not in the catalogue
   */
  public Key parseKey(String backfill, String text) {
    PublishedBackfill definition =
        find(backfill)
            .orElseThrow(
                () ->
                    new ValidationProblem(
                        List.of(
                            new FieldError(
                                "key",
                                "backfill "
                                    + backfill
                                    + " is not in the catalogue: its key's type is unknown"))));
    Object parsed;
    try {
      parsed = json.readValue(text, Object.class);
    } catch (IOException | RuntimeException e) {
      parsed = text;
    }
    try {
      return KeyJson.fromJson(parsed, new KeySchema(definition.key()));
    } catch (IllegalArgumentException e) {
      throw new ValidationProblem(List.of(new FieldError("key", e.getMessage())));
    }
  }

  /** A published key; a worker from before typed keys published none, and hosted long keys only. */
  private List<KeyColumn> key(String name, String text) {
    if (text == null) {
      return KeySchema.LONG.columns();
    }
    try {
      return List.copyOf(json.readValue(text, KEY));
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable key of backfill " + name, e);
    }
  }

  private List<OptionSpec> schema(String name, String text) {
    try {
      List<OptionSpec> options = json.readValue(text, SCHEMA);
      return options == null ? List.of() : List.copyOf(options);
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable options schema of backfill " + name, e);
    }
  }

  /**
   * A request's backfill and options checked against the catalogue.
   *
   * @param definition the definition, or {@code null} if unknown or absent
   * @param options the validated options, or {@code null} if they could not be checked
   */
  public record Checked(PublishedBackfill definition, ValidatedOptions options) {}

  /**
   * Checks a request's backfill name and options (spec R1), adding one error per bad field to
   * {@code errors}: an unknown backfill names the known ones; options are checked only against a
   * known definition and only if they parsed as an object; valid options must fit in {@link
   * #MAX_OPTIONS_BYTES}.
   */
  public Checked check(
      String backfill,
      Map<String, Object> options,
      boolean optionsMalformed,
      List<FieldError> errors) {
    PublishedBackfill definition = null;
    if (backfill != null) {
      definition = find(backfill).orElse(null);
      if (definition == null) {
        List<String> known = all().stream().map(PublishedBackfill::name).toList();
        errors.add(new FieldError("backfill", "unknown backfill; known backfills: " + known));
      }
    }
    ValidatedOptions validated = null;
    if (definition != null && !optionsMalformed) {
      validated = OptionsValidator.validate(definition.options(), options, "options.");
      errors.addAll(validated.errors());
      int size = validated.canonicalJson().getBytes(StandardCharsets.UTF_8).length;
      if (validated.isValid() && size > MAX_OPTIONS_BYTES) {
        errors.add(
            new FieldError(
                "options",
                "must take at most " + MAX_OPTIONS_BYTES + " bytes as JSON, not " + size));
      }
    }
    return new Checked(definition, validated);
  }
}
