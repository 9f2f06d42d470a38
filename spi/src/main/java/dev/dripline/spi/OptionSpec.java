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
 * @param notBefore the option whose value this one's may not be below, or {@code null}: a rule over
 *     the options as a whole, which the app checks from the catalogue, as it checks the others,
 *     before anything is created (a 400 naming this option). Both options are of one {@link
 *     OptionType} with an order — {@code DATE}, {@code DATETIME}, {@code INTEGER}, {@code DECIMAL}
 *     or {@code DURATION} — and the rule holds when either is absent.
 */
public record OptionSpec(
    String name,
    OptionType type,
    boolean required,
    @Nullable Object defaultValue,
    @Nullable List<String> allowedValues,
    @Nullable Long min,
    @Nullable String description,
    @Nullable String notBefore) {

  public static OptionSpec required(String name, OptionType type, String description) {
    return new OptionSpec(name, type, true, null, null, null, description, null);
  }

  public static OptionSpec optional(String name, OptionType type, String description) {
    return new OptionSpec(name, type, false, null, null, null, description, null);
  }

  public static OptionSpec withDefault(
      String name, OptionType type, Object defaultValue, String description) {
    return new OptionSpec(name, type, false, defaultValue, null, null, description, null);
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
        description,
        null);
  }

  /** A copy that accepts integers of at least {@code min}. */
  public OptionSpec atLeast(long min) {
    return new OptionSpec(
        name, type, required, defaultValue, allowedValues, min, description, notBefore);
  }

  /**
   * A copy that may not be below option {@code option}'s value: {@code to} not before {@code from}
   * ({@code OptionSpec.required("to", OptionType.DATE, "…").notBefore("from")}).
   */
  public OptionSpec notBefore(String option) {
    return new OptionSpec(
        name, type, required, defaultValue, allowedValues, min, description, option);
  }
}
