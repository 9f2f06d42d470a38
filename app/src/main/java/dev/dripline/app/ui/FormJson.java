package dev.dripline.app.ui;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.Map;

/**
 * Turns a form's text fields into the JSON body the API's request readers take, so that a form is
 * checked by exactly the API's rules: a field that reads as a number is sent as one, anything else
 * as the text typed, for the API to refuse with its per-field message.
 */
final class FormJson {
  private static final JsonMapper JSON = JsonMapper.createDefault();

  private FormJson() {}

  /** {@code text} as a JSON number if it is one, else as typed; {@code null} if blank. */
  @Nullable
  static Object number(@Nullable String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    String trimmed = text.trim();
    try {
      return Long.valueOf(trimmed);
    } catch (NumberFormatException e) {
      try {
        return new BigDecimal(trimmed);
      } catch (NumberFormatException notDecimal) {
        return text;
      }
    }
  }

  /** A JSON object of {@code fields}. */
  static String object(Map<String, ?> fields) {
    try {
      return JSON.writeValueAsString(fields);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
