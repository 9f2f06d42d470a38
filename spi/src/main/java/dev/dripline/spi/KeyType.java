package dev.dripline.spi;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Types a key column may have (K1 in docs/spec.md), named as in PostgreSQL. On the wire (catalogue,
 * HTTP API) a type is its lower-case name, e.g. {@code "uuid"}.
 *
 * <p>In Java a key value is a {@link Long} (bigint), {@link Integer} (integer), {@link String}
 * (text), {@link java.util.UUID} (uuid), {@link Instant} (timestamptz, kept to microseconds as
 * PostgreSQL keeps it) or {@link LocalDate} (date).
 */
public enum KeyType {
  BIGINT(Long.class),
  INTEGER(Integer.class),
  TEXT(String.class),
  UUID(java.util.UUID.class),
  TIMESTAMPTZ(Instant.class),
  DATE(LocalDate.class);

  private final Class<?> javaType;

  KeyType(Class<?> javaType) {
    this.javaType = javaType;
  }

  /** The Java class of this type's values. */
  public Class<?> javaType() {
    return javaType;
  }

  /** The lower-case name used in JSON and in PostgreSQL. */
  @JsonValue
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads a wire name. */
  @JsonCreator
  public static KeyType fromWire(String value) {
    return valueOf(value.toUpperCase(Locale.ROOT));
  }

  /**
   * {@code value} as this type's Java value: a bigint accepts any integral number, an integer one
   * that fits, a timestamptz an {@link Instant} or {@link OffsetDateTime} (truncated to
   * microseconds); the other types only their own class.
   *
   * @throws IllegalArgumentException when {@code value} is null or not of this type
   */
  public Object conform(Object value) {
    if (value == null) {
      throw new IllegalArgumentException("a " + wire() + " key value may not be null");
    }
    switch (this) {
      case BIGINT -> {
        if (value instanceof Long || value instanceof Integer || value instanceof Short) {
          return ((Number) value).longValue();
        }
      }
      case INTEGER -> {
        if (value instanceof Integer || value instanceof Short) {
          return ((Number) value).intValue();
        }
        if (value instanceof Long number
            && number >= Integer.MIN_VALUE
            && number <= Integer.MAX_VALUE) {
          return number.intValue();
        }
      }
      case TIMESTAMPTZ -> {
        if (value instanceof Instant instant) {
          return instant.truncatedTo(ChronoUnit.MICROS);
        }
        if (value instanceof OffsetDateTime time) {
          return time.toInstant().truncatedTo(ChronoUnit.MICROS);
        }
      }
      default -> {
        if (javaType.isInstance(value)) {
          return value;
        }
      }
    }
    throw new IllegalArgumentException(
        "not a " + wire() + " key value: " + value + " (" + value.getClass().getSimpleName() + ")");
  }
}
