package dev.dripline.app.catalogue;

import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;

/** Reads a run's or a target's stored options (a JSON object) into values sorted by name. */
@Singleton
public class StoredOptions {
  private static final Argument<Map<String, Object>> OPTIONS =
      Argument.mapOf(String.class, Object.class);

  private final JsonMapper json;

  public StoredOptions(JsonMapper json) {
    this.json = json;
  }

  /**
   * @param owner what the options belong to, for the error (e.g. "run 7")
   */
  public Map<String, Object> read(String text, String owner) {
    try {
      Map<String, Object> values = json.readValue(text, OPTIONS);
      return values == null ? Map.of() : new TreeMap<>(values);
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable options of " + owner, e);
    }
  }
}
