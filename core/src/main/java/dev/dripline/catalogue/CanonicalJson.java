package dev.dripline.catalogue;

import java.math.BigDecimal;
import java.util.Map;
import java.util.TreeMap;

/** Writes option values as JSON with sorted keys and no white space. */
final class CanonicalJson {
  private CanonicalJson() {}

  static String write(Map<String, Object> values) {
    StringBuilder out = new StringBuilder("{");
    boolean first = true;
    for (Map.Entry<String, Object> entry : new TreeMap<>(values).entrySet()) {
      if (!first) {
        out.append(',');
      }
      first = false;
      string(out, entry.getKey());
      out.append(':');
      value(out, entry.getValue());
    }
    return out.append('}').toString();
  }

  private static void value(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof BigDecimal decimal) {
      out.append(decimal.stripTrailingZeros().toPlainString());
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else {
      string(out, value.toString());
    }
  }

  private static void string(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
