package dev.dripline.activities.targets;

import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.OptionSpec;
import dev.dripline.store.catalogue.OptionsValidator;
import dev.dripline.store.catalogue.ValidatedOptions;
import dev.dripline.workflows.targets.TargetFailure;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A target's options as its runs and live batches get them: validated against its definition,
 * defaults applied.
 *
 * <p><b>A target's name is its fault tag</b> (spec §7): when the target's definition declares a
 * {@value #FAULT_TAG_OPTION} option and the target's options do not set it, the target's name is
 * used, both when probing the definition during planning and in the options of the run it starts.
 * So an {@code example_faults} row tagged with the target's name makes its planning, its run's
 * batches, or its live batches fail.
 */
@Singleton
class TargetOptions {
  /** The option the examples (and any definition) read their fault tag from. */
  static final String FAULT_TAG_OPTION = "faultTag";

  private static final Argument<Map<String, Object>> OPTIONS =
      Argument.mapOf(String.class, Object.class);

  private final ObjectMapper objectMapper;

  TargetOptions(ObjectMapper objectMapper) {
    this.objectMapper = objectMapper;
  }

  /**
   * The target's options validated against its definition, defaults applied, and the target's name
   * as fault tag if the definition declares one and the options leave it unset.
   *
   * @throws ApplicationFailure non-retryable, {@code TARGET_PLANNING_PERMANENT}, if they do not fit
   */
  ValidatedOptions effectiveOptions(
      BackfillDefinition definition, String target, String optionsJson) {
    Map<String, Object> raw;
    try {
      raw = optionsJson == null ? Map.of() : objectMapper.readValue(optionsJson, OPTIONS);
    } catch (IOException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause(
          "options of target " + target + " are not valid JSON",
          TargetFailure.TARGET_PLANNING_PERMANENT.name(),
          e);
    }
    ValidatedOptions validated = OptionsValidator.validate(definition.options(), raw, "options.");
    if (!validated.isValid()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "options of target "
              + target
              + " do not fit backfill "
              + definition.name()
              + ": "
              + validated.errors().stream()
                  .map(e -> e.field() + " " + e.message())
                  .collect(Collectors.joining("; ")),
          TargetFailure.TARGET_PLANNING_PERMANENT.name());
    }
    boolean declaresFaultTag =
        definition.options().stream().map(OptionSpec::name).anyMatch(FAULT_TAG_OPTION::equals);
    if (!declaresFaultTag || validated.values().containsKey(FAULT_TAG_OPTION)) {
      return validated;
    }
    SortedMap<String, Object> values = new TreeMap<>(validated.values());
    values.put(FAULT_TAG_OPTION, target);
    return new ValidatedOptions(values, validated.errors());
  }
}
