package dev.dripline.activities.catalogue;

import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.OptionSpec;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The JSON form of a definition's option schema as stored in {@code
 * backfill_definitions.options_schema}: an array of {@link OptionSpec} objects with the record's
 * field names and types by their wire names (e.g. {@code "integer"}). The app reads the same column
 * with the same mapper, so this class is the single writer of that format.
 */
@Singleton
public class OptionSchemaJson {
  private static final Argument<List<OptionSpec>> SCHEMA = Argument.listOf(OptionSpec.class);
  private static final Argument<List<KeyColumn>> KEY = Argument.listOf(KeyColumn.class);

  private final ObjectMapper objectMapper;

  public OptionSchemaJson(ObjectMapper objectMapper) {
    this.objectMapper = objectMapper;
  }

  public String write(List<OptionSpec> options) {
    try {
      return objectMapper.writeValueAsString(SCHEMA, options);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write option schema", e);
    }
  }

  /** A definition's key as the catalogue keeps it: {@code [{name, type}]}. */
  public String writeKey(KeySchema key) {
    try {
      return objectMapper.writeValueAsString(KEY, key.columns());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write key schema", e);
    }
  }

  public List<OptionSpec> read(String json) {
    try {
      List<OptionSpec> options = objectMapper.readValue(json, SCHEMA);
      return options == null ? List.of() : options;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read option schema", e);
    }
  }
}
