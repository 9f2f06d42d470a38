package dev.dripline.spi;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * Types a backfill option may have. On the wire (catalogue table, HTTP API) a type is its
 * lower-case name, e.g. {@code "integer"}; the worker writes that form and the app reads it.
 */
public enum OptionType {
  STRING,
  INTEGER,
  DECIMAL,
  BOOLEAN,
  DATE,
  DATETIME,
  /** An ISO-8601 duration such as {@code PT1H} or {@code P1D}, positive: e.g. a time window. */
  DURATION,
  ENUM;

  /** The lower-case name used in JSON. */
  @JsonValue
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads a wire name; upper case is accepted too, so older catalogue rows still load. */
  @JsonCreator
  public static OptionType fromWire(String value) {
    return valueOf(value.toUpperCase(Locale.ROOT));
  }
}
