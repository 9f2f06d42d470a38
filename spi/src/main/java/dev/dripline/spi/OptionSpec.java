package dev.dripline.spi;

import jakarta.annotation.Nullable;
import java.util.List;

/**
 * One typed option of a backfill definition, as published in the catalogue.
 *
 * @param name the option's key in a run's {@code options}
 * @param type its type
 * @param required whether a run must give it (an option with a default is never required)
 * @param defaultValue the value used when absent, of the option's type, or {@code null}
 * @param allowedValues the values an {@link OptionType#ENUM} accepts
 * @param min the least value an {@link OptionType#INTEGER} accepts, or {@code null}
 * @param description what the option means
 */
public record OptionSpec(
    String name,
    OptionType type,
    boolean required,
    @Nullable Object defaultValue,
    @Nullable List<String> allowedValues,
    @Nullable Long min,
    @Nullable String description) {

  public static OptionSpec required(String name, OptionType type, String description) {
    return new OptionSpec(name, type, true, null, null, null, description);
  }

  public static OptionSpec optional(String name, OptionType type, String description) {
    return new OptionSpec(name, type, false, null, null, null, description);
  }

  public static OptionSpec withDefault(
      String name, OptionType type, Object defaultValue, String description) {
    return new OptionSpec(name, type, false, defaultValue, null, null, description);
  }

  public static OptionSpec oneOf(
      String name, List<String> allowedValues, String defaultValue, String description) {
    return new OptionSpec(
        name,
        OptionType.ENUM,
        defaultValue == null,
        defaultValue,
        allowedValues,
        null,
        description);
  }

  /** A copy that accepts integers of at least {@code min}. */
  public OptionSpec atLeast(long min) {
    return new OptionSpec(name, type, required, defaultValue, allowedValues, min, description);
  }
}
