package dev.dripline.spi;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Keys as the API shows them (K1 in docs/spec.md): a number (bigint, integer) or a string (text,
 * uuid, and instants and dates in their ISO-8601 form) for one column, an array of those for a
 * tuple: {@code 42}, {@code "0b6a…"}, {@code "2026-11-30T00:00:00Z"}, {@code [1042, 3]}.
 */
public final class KeyJson {
  private KeyJson() {}

  /** {@code key} as a value a JSON serialiser writes as K1 shows it. */
  public static Object toJson(Key key) {
    if (key == null) {
      return null;
    }
    if (key.size() == 1) {
      return value(key.get(0));
    }
    List<Object> values = new ArrayList<>(key.size());
    for (Object value : key.values()) {
      values.add(value(value));
    }
    return values;
  }

  /**
   * The key of {@code schema} that {@code json} shows, as {@link #toJson} writes it: a number or a
   * string for one column, an array for a tuple; {@code json} as a JSON parser reads it ({@link
   * Number}, {@link String}, {@link List}).
   *
   * @throws IllegalArgumentException saying what does not fit, naming the column
   */
  public static Key fromJson(Object json, KeySchema schema) {
    List<?> values;
    if (schema.size() == 1) {
      if (json instanceof List<?>) {
        throw new IllegalArgumentException(
            "a key of one column is " + EXPECTED.get(schema.column(0).type()) + ", not an array");
      }
      values = Arrays.asList(json);
    } else if (json instanceof List<?> list) {
      values = list;
    } else {
      throw new IllegalArgumentException(
          "a key of " + schema.size() + " columns is an array of " + schema.size() + " values");
    }
    if (values.size() != schema.size()) {
      throw new IllegalArgumentException(
          "a key of " + schema.size() + " columns has as many values, not " + values.size());
    }
    Object[] typed = new Object[values.size()];
    for (int i = 0; i < typed.length; i++) {
      KeyColumn column = schema.column(i);
      typed[i] = value(values.get(i), column);
    }
    return Key.of(typed);
  }

  /**
   * The key of {@code schema} that the JSON text {@code text} shows, e.g. {@code [1042, 3]} as read
   * from a {@code jsonb} column: {@link #fromJson} of the text's value.
   *
   * @throws IllegalArgumentException when {@code text} is not one JSON value, or not a key of
   *     {@code schema}
   */
  public static Key fromJsonText(String text, KeySchema schema) {
    return fromJson(new Reader(text).document(), schema);
  }

  private static Object value(Object json, KeyColumn column) {
    KeyType type = column.type();
    try {
      switch (type) {
        case BIGINT, INTEGER -> {
          if (json instanceof Number number) {
            BigDecimal exact = new BigDecimal(number.toString());
            long value = exact.longValueExact();
            return type.conform(value);
          }
        }
        case TEXT -> {
          if (json instanceof String text) {
            return text;
          }
        }
        case UUID -> {
          if (json instanceof String text && UUID_TEXT.matcher(text).matches()) {
            return java.util.UUID.fromString(text);
          }
        }
        case TIMESTAMPTZ -> {
          if (json instanceof String text) {
            return type.conform(OffsetDateTime.parse(text));
          }
        }
        case DATE -> {
          if (json instanceof String text) {
            return LocalDate.parse(text);
          }
        }
      }
    } catch (ArithmeticException | DateTimeParseException | IllegalArgumentException e) {
      // falls through to the error below
    }
    throw new IllegalArgumentException(
        column.name() + " must be " + EXPECTED.get(type) + ", not " + shown(json));
  }

  private static final java.util.regex.Pattern UUID_TEXT =
      java.util.regex.Pattern.compile(
          "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  private static final Map<KeyType, String> EXPECTED =
      Map.of(
          KeyType.BIGINT, "an integer (bigint)",
          KeyType.INTEGER, "an integer (32-bit)",
          KeyType.TEXT, "a string",
          KeyType.UUID, "a UUID string",
          KeyType.TIMESTAMPTZ, "an ISO-8601 instant with an offset, e.g. 2026-11-30T00:00:00Z",
          KeyType.DATE, "an ISO-8601 date, e.g. 2026-11-30");

  private static String shown(Object json) {
    if (json == null) {
      return "null";
    }
    String text = json instanceof String ? '"' + json.toString() + '"' : json.toString();
    return text.length() > 60 ? text.substring(0, 60) + "…" : text;
  }

  private static Object value(Object value) {
    return value instanceof Number ? value : value.toString();
  }

  /**
   * Reads the JSON a key can be: a number, a string, {@code true}, {@code false}, {@code null}, or
   * an array of those. Numbers are {@link BigDecimal}s, arrays {@link List}s.
   */
  private static final class Reader {
    private final String text;
    private int at;

    Reader(String text) {
      this.text = text;
    }

    Object document() {
      Object value = value(true);
      skipSpace();
      if (at != text.length()) {
        throw error("text after the value");
      }
      return value;
    }

    private Object value(boolean arrayAllowed) {
      skipSpace();
      if (at >= text.length()) {
        throw error("no value");
      }
      char c = text.charAt(at);
      if (c == '[' && arrayAllowed) {
        return array();
      }
      if (c == '"') {
        return string();
      }
      if (c == '-' || (c >= '0' && c <= '9')) {
        return number();
      }
      for (Map.Entry<String, Boolean> literal : LITERALS.entrySet()) {
        if (text.startsWith(literal.getKey(), at)) {
          at += literal.getKey().length();
          return literal.getValue();
        }
      }
      if (text.startsWith("null", at)) {
        at += 4;
        return null;
      }
      throw error("not a number, string or array of those");
    }

    private List<Object> array() {
      at++;
      List<Object> values = new ArrayList<>();
      skipSpace();
      if (at < text.length() && text.charAt(at) == ']') {
        at++;
        return values;
      }
      while (true) {
        values.add(value(false));
        skipSpace();
        if (at >= text.length()) {
          throw error("an array without its ]");
        }
        char c = text.charAt(at++);
        if (c == ']') {
          return values;
        }
        if (c != ',') {
          throw error("expected , or ]");
        }
      }
    }

    private String string() {
      StringBuilder out = new StringBuilder();
      at++;
      while (at < text.length()) {
        char c = text.charAt(at++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (at >= text.length()) {
          break;
        }
        char escaped = text.charAt(at++);
        switch (escaped) {
          case '"', '\\', '/' -> out.append(escaped);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (at + 4 > text.length()) {
              throw error("a \\u escape of fewer than four digits");
            }
            try {
              out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            } catch (NumberFormatException e) {
              throw error("a \\u escape that is not hexadecimal");
            }
            at += 4;
          }
          default -> throw error("an unknown escape \\" + escaped);
        }
      }
      throw error("a string without its closing quote");
    }

    private BigDecimal number() {
      int start = at;
      while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
        at++;
      }
      try {
        return new BigDecimal(text.substring(start, at));
      } catch (NumberFormatException e) {
        throw error("a malformed number");
      }
    }

    private void skipSpace() {
      while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
        at++;
      }
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(
          "not a key's JSON: " + what + " at character " + at + " of " + shown(text));
    }

    private static final Map<String, Boolean> LITERALS = Map.of("true", true, "false", false);
  }
}
