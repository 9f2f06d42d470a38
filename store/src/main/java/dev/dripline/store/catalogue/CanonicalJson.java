package dev.dripline.store.catalogue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes option values as JSON with sorted keys and no white space.
 *
 * <p>The text is stored in {@code runs.options_key} and compared with that of new requests, so it
 * must not change: decimals are written plain without trailing zeros, and Jackson's escaping is set
 * to what Dripline always wrote, six-character escapes with lower-case hex digits for every control
 * character but newline, carriage return and tab (CanonicalJsonTest pins the text).
 */
final class CanonicalJson {
  private static final JsonFactory JSON =
      new JsonFactoryBuilder()
          .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
          .characterEscapes(new UnicodeBackspaceAndFormFeed())
          .build();

  /** Jackson's standard escapes, but six-character ones for backspace and form feed too. */
  private static final class UnicodeBackspaceAndFormFeed extends CharacterEscapes {
    private final int[] ascii = standardAsciiEscapesForJSON();

    UnicodeBackspaceAndFormFeed() {
      ascii['\b'] = ESCAPE_STANDARD;
      ascii['\f'] = ESCAPE_STANDARD;
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return null;
    }
  }

  private CanonicalJson() {}

  static String write(Map<String, Object> values) {
    StringWriter out = new StringWriter();
    try (JsonGenerator json = JSON.createGenerator(out)) {
      json.writeStartObject();
      for (Map.Entry<String, Object> entry : new TreeMap<>(values).entrySet()) {
        json.writeFieldName(entry.getKey());
        value(json, entry.getValue());
      }
      json.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a StringWriter does not fail
    }
    return out.toString();
  }

  private static void value(JsonGenerator json, Object value) throws IOException {
    if (value == null) {
      json.writeNull();
    } else if (value instanceof BigDecimal decimal) {
      json.writeNumber(decimal.stripTrailingZeros().toPlainString());
    } else if (value instanceof Number) {
      json.writeNumber(value.toString());
    } else if (value instanceof Boolean bool) {
      json.writeBoolean(bool);
    } else {
      json.writeString(value.toString());
    }
  }
}
