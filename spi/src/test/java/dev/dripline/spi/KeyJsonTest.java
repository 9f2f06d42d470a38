package dev.dripline.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class KeyJsonTest {
  private static final KeySchema ORDER_LINES =
      KeySchema.of(
          KeyColumn.of("order_id", KeyType.BIGINT), KeyColumn.of("line_no", KeyType.INTEGER));

  @Test
  void aKeyReadsBackFromTheJsonItIsShownAs() {
    UUID id = UUID.fromString("0b6a3c1e-9a2f-4c7d-8e1b-2f3a4b5c6d7e");
    KeySchema handles = KeySchema.of(KeyColumn.of("id", KeyType.UUID));
    KeySchema days = KeySchema.of(KeyColumn.of("day", KeyType.DATE));
    KeySchema instants = KeySchema.of(KeyColumn.of("at", KeyType.TIMESTAMPTZ));

    Key line = ORDER_LINES.key(1042L, 3);
    assertThat(KeyJson.fromJsonText(" [1042, 3] ", ORDER_LINES)).isEqualTo(line);
    assertThat(KeyJson.fromJson(KeyJson.toJson(line), ORDER_LINES)).isEqualTo(line);
    assertThat(KeyJson.fromJsonText("\"" + id + "\"", handles)).isEqualTo(handles.key(id));
    assertThat(KeyJson.fromJsonText("\"2026-11-30\"", days))
        .isEqualTo(days.key(LocalDate.of(2026, 11, 30)));
    assertThat(KeyJson.fromJsonText("\"2026-11-30T00:00:00Z\"", instants))
        .isEqualTo(instants.key(OffsetDateTime.parse("2026-11-30T00:00:00Z")));
  }

  @Test
  void stringsKeepTheirEscapes() {
    KeySchema names = KeySchema.of(KeyColumn.of("name", KeyType.TEXT));

    assertThat(KeyJson.fromJsonText("\"a\\\"b\\\\c\\u00e9\\n\"", names))
        .isEqualTo(names.key("a\"b\\cé\n"));
  }

  @Test
  void textThatIsNotOneKeysJsonIsRefusedSayingWhere() {
    assertThatThrownBy(() -> KeyJson.fromJsonText("[1042, 3] x", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("text after the value");
    assertThatThrownBy(() -> KeyJson.fromJsonText("[[1042], 3]", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyJson.fromJsonText("[1042, 3", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("without its ]");
    assertThatThrownBy(() -> KeyJson.fromJsonText("\"open", KeySchema.LONG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("closing quote");
    assertThatThrownBy(() -> KeyJson.fromJsonText("1-2", KeySchema.LONG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed number");
  }

  @Test
  void aValueThatDoesNotFitItsColumnIsRefusedNamingTheColumn() {
    assertThatThrownBy(() -> KeyJson.fromJsonText("[1042, 3.5]", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("line_no must be an integer (32-bit)");
    assertThatThrownBy(() -> KeyJson.fromJsonText("[1042, true]", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("line_no must be");
    assertThatThrownBy(() -> KeyJson.fromJsonText("1042", ORDER_LINES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is an array of 2 values");
  }
}
