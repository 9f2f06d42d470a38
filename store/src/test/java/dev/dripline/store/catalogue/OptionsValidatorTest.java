package dev.dripline.store.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OptionsValidatorTest {
  private static final List<OptionSpec> SCHEMA =
      List.of(
          OptionSpec.required("items", OptionType.INTEGER, "how many").atLeast(0),
          OptionSpec.withDefault("sleepMs", OptionType.INTEGER, 0, "pause per batch"),
          OptionSpec.optional("tag", OptionType.STRING, "a tag"),
          OptionSpec.optional("ratio", OptionType.DECIMAL, "a ratio"),
          OptionSpec.optional("dryRun", OptionType.BOOLEAN, "no writes"),
          OptionSpec.optional("since", OptionType.DATE, "first day"),
          OptionSpec.optional("until", OptionType.DATETIME, "last instant"),
          OptionSpec.optional("window", OptionType.DURATION, "a window"),
          OptionSpec.oneOf("mode", List.of("fast", "safe"), "safe", "how"));

  private static ValidatedOptions validate(Map<String, Object> raw) {
    return OptionsValidator.validate(SCHEMA, raw, "options.");
  }

  @Test
  void validOptionsAreNormalizedWithDefaultsApplied() {
    Map<String, Object> raw = new HashMap<>();
    raw.put("items", 10);
    raw.put("ratio", 0.5);
    raw.put("dryRun", true);
    raw.put("since", "2026-01-31");
    raw.put("until", "2026-01-31T12:00:00+01:00");

    ValidatedOptions options = validate(raw);

    assertThat(options.errors()).isEmpty();
    assertThat(options.values())
        .containsEntry("items", 10L)
        .containsEntry("sleepMs", 0L)
        .containsEntry("mode", "safe")
        .containsEntry("ratio", new BigDecimal("0.5"))
        .containsEntry("until", "2026-01-31T11:00:00Z")
        .doesNotContainKey("tag");
  }

  @Test
  void everyViolationIsOneErrorNamingItsField() {
    Map<String, Object> raw = new HashMap<>();
    raw.put("items", -1);
    raw.put("sleepMs", "fast");
    raw.put("tag", 7);
    raw.put("ratio", "half");
    raw.put("dryRun", "yes");
    raw.put("since", "31/01/2026");
    raw.put("until", "noon");
    raw.put("mode", "reckless");
    raw.put("colour", "red");

    ValidatedOptions options = validate(raw);

    assertThat(options.errors())
        .extracting(FieldError::field)
        .containsExactlyInAnyOrder(
            "options.items",
            "options.sleepMs",
            "options.tag",
            "options.ratio",
            "options.dryRun",
            "options.since",
            "options.until",
            "options.mode",
            "options.colour");
  }

  @Test
  void aWindowIsAPositiveDurationKeptInCanonicalForm() {
    assertThat(validate(Map.of("items", 1, "window", "P1D")).values())
        .containsEntry("window", "P1D");
    assertThat(validate(Map.of("items", 1, "window", "PT48H")).values())
        .containsEntry("window", "P2D");
    assertThat(validate(Map.of("items", 1, "window", "PT90M")).values())
        .containsEntry("window", "PT1H30M");
    assertThat(validate(Map.of("items", 1, "window", "P1000000D")).values())
        .containsEntry("window", "P1000000D");
    for (Object bad : List.of("PT0S", "-PT1H", "P-1D", "PT0.0000001S", "1 day", 3600, true)) {
      assertThat(validate(Map.of("items", 1, "window", bad)).errors())
          .as("window %s", bad)
          .singleElement()
          .satisfies(
              error -> {
                assertThat(error.field()).isEqualTo("options.window");
                assertThat(error.message()).contains("positive ISO-8601 duration");
              });
    }
  }

  @Test
  void missingRequiredOptionIsAnError() {
    assertThat(validate(Map.of()).errors())
        .containsExactly(new FieldError("options.items", "is required"));
  }

  @Test
  void integralDecimalIsAcceptedAsIntegerButAFractionIsNot() {
    assertThat(validate(Map.of("items", 3.0)).values()).containsEntry("items", 3L);
    assertThat(validate(Map.of("items", 3.5)).errors()).hasSize(1);
  }

  @Test
  void aNumberBeyondADoubleIsOutOfRange() {
    // JSON 1e309 is read as infinity.
    Map<String, Object> raw =
        Map.of("items", Double.POSITIVE_INFINITY, "ratio", Double.NEGATIVE_INFINITY);

    assertThat(validate(raw).errors())
        .containsExactlyInAnyOrder(
            new FieldError("options.items", "is out of range"),
            new FieldError("options.ratio", "is out of range"));
  }

  @Test
  void identicalOptionsGiveIdenticalCanonicalJsonWhateverTheOrderOrDefaults() {
    String explicit = validate(Map.of("mode", "safe", "items", 5, "sleepMs", 0)).canonicalJson();
    String implicit = validate(Map.of("items", 5)).canonicalJson();

    assertThat(explicit)
        .isEqualTo(implicit)
        .isEqualTo("{\"items\":5,\"mode\":\"safe\",\"sleepMs\":0}");
    assertThat(validate(Map.of("items", 6)).canonicalJson()).isNotEqualTo(implicit);
  }

  @Test
  void anOptionBelowTheOneItMayNotBeBelowIsAnErrorOnIt() {
    List<OptionSpec> ranges =
        List.of(
            OptionSpec.required("from", OptionType.DATE, "first day"),
            OptionSpec.required("to", OptionType.DATE, "last day").notBefore("from"),
            OptionSpec.optional("since", OptionType.DATETIME, "first instant"),
            OptionSpec.optional("until", OptionType.DATETIME, "last instant").notBefore("since"),
            OptionSpec.optional("least", OptionType.INTEGER, "fewest"),
            OptionSpec.optional("most", OptionType.INTEGER, "most").notBefore("least"),
            OptionSpec.optional("low", OptionType.DECIMAL, "low"),
            OptionSpec.optional("high", OptionType.DECIMAL, "high").notBefore("low"),
            OptionSpec.optional("short", OptionType.DURATION, "short"),
            OptionSpec.optional("long", OptionType.DURATION, "long").notBefore("short"));
    Map<String, Object> inverted = new HashMap<>();
    inverted.put("from", "2026-12-01");
    inverted.put("to", "2026-11-30");
    inverted.put("since", "2026-12-01T00:00:00+01:00");
    inverted.put("until", "2026-11-30T22:30:00Z");
    inverted.put("least", 5);
    inverted.put("most", 4);
    inverted.put("low", 1.5);
    inverted.put("high", 1.25);
    inverted.put("short", "P1D");
    inverted.put("long", "PT23H");

    ValidatedOptions bad = OptionsValidator.validate(ranges, inverted, "options.");
    ValidatedOptions equal =
        OptionsValidator.validate(
            ranges,
            Map.of("from", "2026-11-30", "to", "2026-11-30", "short", "P1D", "long", "PT24H"),
            "options.");
    ValidatedOptions halfGiven =
        OptionsValidator.validate(
            ranges,
            Map.of("from", "2026-11-30", "to", "2026-12-01", "until", "2026-11-30T00:00:00Z"),
            "");

    assertThat(bad.errors())
        .containsExactlyInAnyOrder(
            new FieldError("options.to", "must not be before options.from (2026-12-01)"),
            new FieldError(
                "options.until", "must not be before options.since (2026-11-30T23:00:00Z)"),
            new FieldError("options.most", "must not be before options.least (5)"),
            new FieldError("options.high", "must not be before options.low (1.5)"),
            new FieldError("options.long", "must not be before options.short (P1D)"));
    assertThat(equal.errors()).isEmpty();
    assertThat(halfGiven.errors()).isEmpty();
  }

  @Test
  void anOptionWithAnErrorOfItsOwnIsNotComparedToAnother() {
    List<OptionSpec> ranges =
        List.of(
            OptionSpec.required("from", OptionType.DATE, "first day"),
            OptionSpec.required("to", OptionType.DATE, "last day").notBefore("from"));

    assertThat(
            OptionsValidator.validate(ranges, Map.of("from", "soon", "to", "2026-11-30"), "")
                .errors())
        .containsExactly(new FieldError("from", "must be an ISO-8601 date such as 2026-01-31"));
  }
}
