package dev.dripline.store.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pins the exact text of canonical JSON: it is stored in {@code runs.options_key}, so a run created
 * before a change must keep matching a request with the same options after it.
 */
class CanonicalJsonTest {

  private static String write(Object... keysAndValues) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      values.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return CanonicalJson.write(values);
  }

  private static String chars(int... codeUnits) {
    StringBuilder text = new StringBuilder();
    for (int c : codeUnits) {
      text.append((char) c);
    }
    return text.toString();
  }

  @Test
  void noValuesAreAnEmptyObject() {
    assertThat(CanonicalJson.write(Map.of())).isEqualTo("{}");
  }

  @Test
  void keysAreSortedByUtf16CodeUnits() {
    assertThat(write("b", 1L, "a", 2L, "B", 3L, "é", 4L, "_", 5L, "10", 6L, "9", 7L, "aa", 8L))
        .isEqualTo("{\"10\":6,\"9\":7,\"B\":3,\"_\":5,\"a\":2,\"aa\":8,\"b\":1,\"é\":4}");
  }

  @Test
  void integersAreWrittenInFull() {
    assertThat(write("min", Long.MIN_VALUE, "max", Long.MAX_VALUE, "zero", 0L, "minus", -1L))
        .isEqualTo(
            "{\"max\":9223372036854775807,\"min\":-9223372036854775808,\"minus\":-1,\"zero\":0}");
  }

  @Test
  void decimalsAreWrittenPlainWithoutTrailingZeros() {
    assertThat(
            write(
                "a", new BigDecimal("1.500"),
                "b", new BigDecimal("100"),
                "c", new BigDecimal("1E+3"),
                "d", new BigDecimal("0.000"),
                "e", new BigDecimal("-0.0100"),
                "f", new BigDecimal("1E-10"),
                "g", new BigDecimal("12345678901234567890.1230"),
                "h", new BigDecimal("-5"),
                "i", new BigDecimal("2.5E+25")))
        .isEqualTo(
            "{\"a\":1.5,\"b\":100,\"c\":1000,\"d\":0,\"e\":-0.01,\"f\":0.0000000001,"
                + "\"g\":12345678901234567890.123,\"h\":-5,\"i\":25000000000000000000000000}");
  }

  @Test
  void booleansAndNullAreLiterals() {
    Map<String, Object> values = new HashMap<>();
    values.put("yes", true);
    values.put("no", false);
    values.put("none", null);

    assertThat(CanonicalJson.write(values)).isEqualTo("{\"no\":false,\"none\":null,\"yes\":true}");
  }

  @Test
  void otherNumbersAndObjectsAreWrittenAsTheirText() {
    assertThat(write("int", 7, "date", LocalDate.of(2026, 1, 31)))
        .isEqualTo("{\"date\":\"2026-01-31\",\"int\":7}");
  }

  @Test
  void quoteBackslashAndCommonControlCharactersHaveShortEscapes() {
    assertThat(write("s", "a\"b\\c\nd\re\tf")).isEqualTo("{\"s\":\"a\\\"b\\\\c\\nd\\re\\tf\"}");
  }

  @Test
  void otherControlCharactersAreLowerCaseUnicodeEscapes() {
    // Backspace and form feed included: \\u0008 and \\u000c, not \\b and \\f.
    assertThat(write("s", chars(0x00, 0x01, 0x08, 0x0b, 0x0c, 0x0e, 0x1a, 0x1f)))
        .isEqualTo("{\"s\":\"\\u0000\\u0001\\u0008\\u000b\\u000c\\u000e\\u001a\\u001f\"}");
  }

  @Test
  void everythingElseIsWrittenAsIs() {
    String text =
        "/<>&' ~"
            + chars(0x7f, 0x80, 0xa0, 0xad, 0x2028, 0x2029, 0xfeff, 0xfffd)
            + "é日本\uD83D\uDE00"
            + chars(0xd800)
            + "x"
            + chars(0xdc00);

    assertThat(write("s", text, "", "")).isEqualTo("{\"\":\"\",\"s\":\"" + text + "\"}");
  }

  @Test
  void keysAreEscapedLikeStrings() {
    assertThat(write("k\"\n" + chars(0x01), "v")).isEqualTo("{\"k\\\"\\n\\u0001\":\"v\"}");
  }
}
