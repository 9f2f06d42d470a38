package dev.dripline.spi;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** A run's options, already validated against the definition's schema, with typed access. */
public final class BackfillOptions {
  private final Map<String, Object> values;

  public BackfillOptions(Map<String, Object> values) {
    this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
  }

  public Map<String, Object> asMap() {
    return values;
  }

  public Optional<String> string(String name) {
    return Optional.ofNullable(values.get(name)).map(Object::toString);
  }

  public String requireString(String name) {
    return string(name).orElseThrow(() -> missing(name));
  }

  public Optional<Long> integer(String name) {
    Object value = values.get(name);
    return value == null
        ? Optional.empty()
        : Optional.of(new BigDecimal(value.toString()).longValueExact());
  }

  public long requireInteger(String name) {
    return integer(name).orElseThrow(() -> missing(name));
  }

  public Optional<BigDecimal> decimal(String name) {
    return Optional.ofNullable(values.get(name)).map(v -> new BigDecimal(v.toString()));
  }

  public Optional<Boolean> bool(String name) {
    return Optional.ofNullable(values.get(name)).map(v -> Boolean.valueOf(v.toString()));
  }

  public Optional<LocalDate> date(String name) {
    return string(name).map(LocalDate::parse);
  }

  public LocalDate requireDate(String name) {
    return date(name).orElseThrow(() -> missing(name));
  }

  public Optional<Instant> instant(String name) {
    return string(name).map(Instant::parse);
  }

  /** A {@link OptionType#DURATION} option: positive, as the schema's validation ensured. */
  public Optional<Duration> duration(String name) {
    return string(name).map(Duration::parse);
  }

  public Duration requireDuration(String name) {
    return duration(name).orElseThrow(() -> missing(name));
  }

  private static IllegalStateException missing(String name) {
    return new IllegalStateException("option " + name + " is not set");
  }
}
