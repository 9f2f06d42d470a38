package dev.dripline.store.catalogue;

import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Checks a run's options against a definition's schema (spec R1): known keys, right types, required
 * ones present, enum values allowed, and the rules over the options as a whole that the schema
 * declares ({@link OptionSpec#notBefore()}). Used by the app before anything is created and by the
 * worker when it reads options back.
 */
public final class OptionsValidator {
  private OptionsValidator() {}

  /**
   * @param schema the definition's options
   * @param raw the options as parsed from JSON (numbers, strings, booleans); may be null
   * @param fieldPrefix prefix of field names in errors, e.g. {@code "options."}
   */
  public static ValidatedOptions validate(
      List<OptionSpec> schema, Map<String, Object> raw, String fieldPrefix) {
    Map<String, Object> given = raw == null ? Map.of() : raw;
    SortedMap<String, Object> values = new TreeMap<>();
    List<FieldError> errors = new ArrayList<>();
    Map<String, OptionSpec> byName = new TreeMap<>();
    for (OptionSpec spec : schema) {
      byName.put(spec.name(), spec);
    }
    for (String key : new TreeMap<>(given).keySet()) {
      if (!byName.containsKey(key)) {
        errors.add(
            new FieldError(fieldPrefix + key, "unknown option; known options: " + byName.keySet()));
      }
    }
    for (OptionSpec spec : byName.values()) {
      String field = fieldPrefix + spec.name();
      Object value = given.get(spec.name());
      if (value == null) {
        if (spec.defaultValue() != null) {
          values.put(spec.name(), normalizeDefault(spec));
        } else if (spec.required()) {
          errors.add(new FieldError(field, "is required"));
        }
        continue;
      }
      try {
        values.put(spec.name(), normalize(spec, value));
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError(field, e.getMessage()));
      }
    }
    for (OptionSpec spec : byName.values()) {
      String other = spec.notBefore();
      Object value = values.get(spec.name());
      Object floor = other == null ? null : values.get(other);
      // Only two valid values compare: an option with an error of its own has one already.
      if (value != null && floor != null && order(spec.type(), value, floor) < 0) {
        errors.add(
            new FieldError(
                fieldPrefix + spec.name(),
                "must not be before " + fieldPrefix + other + " (" + floor + ")"));
      }
    }
    return new ValidatedOptions(values, List.copyOf(errors));
  }

  /**
   * How two normalized values of {@code type} compare in the type's order.
   *
   * @throws IllegalStateException for a type without one: the definition's rule is wrong
   */
  private static int order(OptionType type, Object value, Object other) {
    return switch (type) {
      case DATE -> LocalDate.parse((String) value).compareTo(LocalDate.parse((String) other));
      case DATETIME -> Instant.parse((String) value).compareTo(Instant.parse((String) other));
      case INTEGER -> Long.compare((Long) value, (Long) other);
      case DECIMAL -> ((BigDecimal) value).compareTo((BigDecimal) other);
      case DURATION -> Duration.parse((String) value).compareTo(Duration.parse((String) other));
      case STRING, BOOLEAN, ENUM ->
          throw new IllegalStateException("options of type " + type + " have no order");
    };
  }

  private static Object normalizeDefault(OptionSpec spec) {
    try {
      return normalize(spec, spec.defaultValue());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "default of option " + spec.name() + " does not fit its type: " + e.getMessage(), e);
    }
  }

  private static Object normalize(OptionSpec spec, Object value) {
    return switch (spec.type()) {
      case STRING -> {
        if (!(value instanceof String s)) {
          throw new IllegalArgumentException("must be a string");
        }
        yield s;
      }
      case INTEGER -> {
        long n = integer(value);
        if (spec.min() != null && n < spec.min()) {
          throw new IllegalArgumentException("must be at least " + spec.min());
        }
        yield n;
      }
      case DECIMAL -> decimal(value);
      case BOOLEAN -> {
        if (!(value instanceof Boolean b)) {
          throw new IllegalArgumentException("must be true or false");
        }
        yield b;
      }
      case DATE -> {
        try {
          yield LocalDate.parse(text(value, "an ISO-8601 date such as 2026-01-31")).toString();
        } catch (DateTimeParseException e) {
          throw new IllegalArgumentException("must be an ISO-8601 date such as 2026-01-31");
        }
      }
      case DATETIME -> {
        String text = text(value, "an ISO-8601 instant such as 2026-01-31T12:00:00Z");
        try {
          yield OffsetDateTime.parse(text).toInstant().toString();
        } catch (DateTimeParseException e) {
          try {
            yield Instant.parse(text).toString();
          } catch (DateTimeParseException again) {
            throw new IllegalArgumentException(
                "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z");
          }
        }
      }
      case DURATION -> duration(value);
      case ENUM -> {
        List<String> allowed = spec.allowedValues() == null ? List.of() : spec.allowedValues();
        if (!(value instanceof String s) || !allowed.contains(s)) {
          throw new IllegalArgumentException("must be one of " + allowed);
        }
        yield s;
      }
    };
  }

  /**
   * A positive ISO-8601 duration of at least a microsecond (timestamptz's precision), in canonical
   * form: whole days as {@code P<n>D}, else {@link Duration#toString()} ({@code PT1H30M}).
   */
  private static String duration(Object value) {
    String expected = "a positive ISO-8601 duration such as PT1H or P1D";
    Duration duration;
    try {
      duration = Duration.parse(text(value, expected));
    } catch (DateTimeParseException | ArithmeticException e) {
      throw new IllegalArgumentException("must be " + expected);
    }
    if (duration.compareTo(Duration.ofNanos(1_000)) < 0) {
      throw new IllegalArgumentException("must be " + expected + ", not " + value);
    }
    // Seconds and nanos, not toNanos(): a duration beyond 292 years does not fit in a long of
    // nanos.
    boolean wholeDays = duration.getNano() == 0 && duration.getSeconds() % 86_400 == 0;
    return wholeDays ? "P" + duration.toDays() + "D" : duration.toString();
  }

  private static String text(Object value, String expected) {
    if (!(value instanceof String s)) {
      throw new IllegalArgumentException("must be " + expected);
    }
    return s;
  }

  private static long integer(Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      return ((Number) value).longValue();
    }
    if (value instanceof BigInteger big) {
      try {
        return big.longValueExact();
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("is out of range");
      }
    }
    if ((value instanceof Double d && d.isInfinite())
        || (value instanceof Float f && f.isInfinite())) {
      // 1e309 and the like: beyond a double, read as infinity.
      throw new IllegalArgumentException("is out of range");
    }
    if (value instanceof BigDecimal || value instanceof Double || value instanceof Float) {
      BigDecimal decimal = new BigDecimal(value.toString());
      try {
        return decimal.longValueExact();
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("must be an integer");
      }
    }
    throw new IllegalArgumentException("must be an integer");
  }

  private static BigDecimal decimal(Object value) {
    if (value instanceof Number) {
      try {
        return new BigDecimal(value.toString());
      } catch (NumberFormatException e) {
        // infinity: 1e309 and the like
        throw new IllegalArgumentException("is out of range");
      }
    }
    throw new IllegalArgumentException("must be a decimal number");
  }
}
